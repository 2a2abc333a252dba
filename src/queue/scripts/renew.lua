-- Extends the leases of deliveries still held by their token. ARGV = {base,
-- wake, lease ms, id1, token1, id2, token2, ...}. Returns 1 or 0 per pair.
--@include _clock.lua
--@include _queue.lua
-- A renewal grows nothing: at the server's maxmemory it still goes (Redis
-- refuses only a script's first write that may grow memory; ZADD is one,
-- and this no-op write comes first).
redis.call('ZREM', active, '')
local now = now_ms()
local out = {}
for i = 4, #ARGV, 2 do
  local v = redis.call('HMGET', message_key(ARGV[i]), 's', 't')
  if v[1] == 'a' and v[2] == ARGV[i + 1] then
    redis.call('ZADD', active, 'XX', now + tonumber(ARGV[3]), ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
