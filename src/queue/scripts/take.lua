-- Takes back expired deliveries, then delivers the first due message under
-- a lease. ARGV = {base, wake, lease ms, jitter}. Returns
-- {1, now, id, payload, fencing token, due, deliveries, failures, retries, last error}
-- or {0, now, next} where next is when to look again (the first due time or
-- lease deadline; -1: nothing queued).
--@include _queue.lua
local now = now_ms()
reclaim(now, tonumber(ARGV[4]))
while true do
  local first = redis.call('ZRANGEBYSCORE', scheduled, '-inf', now, 'LIMIT', 0, 1)[1]
  if not first then break end
  redis.call('ZREM', scheduled, first)
  local id = string.sub(first, 17)
  local key = message_key(id)
  local v = redis.call('HMGET', key, 'b', 'due', 'f', 'r', 'e')
  if v[1] then
    local token = redis.call('INCR', counter)
    local deliveries = redis.call('HINCRBY', key, 'n', 1)
    redis.call('HSET', key, 's', 'a', 't', token)
    redis.call('ZADD', active, now + tonumber(ARGV[3]), id)
    return {1, now, id, v[1], token, tonumber(v[2]), deliveries, tonumber(v[3]), tonumber(v[4]), v[5]}
  end
  -- (a schedule entry without its message: dropped, never delivered empty)
end
local next = -1
local z = redis.call('ZRANGE', scheduled, 0, 0, 'WITHSCORES')[2]
if z then next = tonumber(z) end
local a = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')[2]
if a and (next < 0 or tonumber(a) < next) then next = tonumber(a) end
return {0, now, next}
