-- Settles an in-flight delivery for the worker holding fencing token
-- ARGV[4]. KEYS[5] = the message; ARGV = {base, wake, id, token, action,
-- value, jitter}: action 'ack' (done: removed), 'retry' (again after value
-- ms, not a failure), 'fail' (a failed attempt, value the reason), 'dead'
-- (dead-lettered now, value the reason). Returns 1 settled, 2 dead-lettered,
-- 0 taken back (its lease ran out and it was reclaimed, maybe redelivered),
-- -1 gone (cancelled, or acknowledged already).
--@include _queue.lua
local key, id, action = KEYS[5], ARGV[3], ARGV[5]
local v = redis.call('HMGET', key, 's', 't', 'm')
if not v[1] then return -1 end
if v[1] ~= 'a' or v[2] ~= ARGV[4] then return 0 end
redis.call('ZREM', active, id)
local now = now_ms()
if action == 'ack' then
  redis.call('DEL', key)
  return 1
elseif action == 'retry' then
  schedule(key, v[3], now + tonumber(ARGV[6]))
  return 1
elseif action == 'fail' then
  return fail_attempt(id, now, ARGV[6], tonumber(ARGV[7]))
end
redis.call('HSET', key, 's', 'd', 't', '', 'e', ARGV[6])
redis.call('ZADD', dead, now, id)
return 2
