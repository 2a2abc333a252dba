-- Extends the leases of deliveries still held by their token. ARGV = {base,
-- wake, lease ms, id1, token1, id2, token2, ...}. Returns 1 or 0 per pair.
--@include _queue.lua
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
