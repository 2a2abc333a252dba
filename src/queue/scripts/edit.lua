-- Changes one message by id. KEYS[5] = the message; ARGV = {base, wake, id,
-- action, value}: 'cancel' (removed in any state; a holder's settle is then
-- refused), 'reschedule' (a delayed or ready message due in value ms),
-- 'requeue' (a dead message due now, its failures forgotten). Returns 1 done,
-- 0 not in a state that allows it, -1 no such message.
--@include _queue.lua
local key, id, action = KEYS[5], ARGV[3], ARGV[4]
local v = redis.call('HMGET', key, 's', 'm')
if not v[1] then return -1 end
if action == 'cancel' then
  redis.call('ZREM', scheduled, v[2])
  redis.call('ZREM', active, id)
  redis.call('ZREM', dead, id)
  redis.call('DEL', key)
  return 1
end
local now = now_ms()
if action == 'reschedule' and v[1] == 'z' then
  schedule(key, v[2], now + tonumber(ARGV[5]))
  return 1
elseif action == 'requeue' and v[1] == 'd' then
  redis.call('ZREM', dead, id)
  redis.call('HSET', key, 'f', 0)
  schedule(key, v[2], now)
  return 1
end
return 0
