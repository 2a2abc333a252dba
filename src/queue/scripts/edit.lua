-- Changes one message by id. KEYS[5] = the message; ARGV = {base, wake, id,
-- action, value}: 'cancel' (removed in any state; a holder's settle is then
-- refused), 'reschedule' (a delayed or ready message due in value ms),
-- 'requeue' (a dead message due now, its failures forgotten). Returns 1 done,
-- 0 not in a state that allows it, -1 no such message.
-- A message cancelled in flight leaves a marker (state 'c', nothing else)
-- until its delivery lease's end: its holder's settle answers "cancelled",
-- while one that finds no message at all is an ack sent again after its
-- answer was lost (settle() in _queue.lua). Every script reads the marker
-- as no message; an offer of the id replaces it.
--@include _clock.lua
--@include _queue.lua
local key, id, action = KEYS[5], ARGV[3], ARGV[4]
local v = redis.call('HMGET', key, 's', 'm')
if not v[1] or v[1] == 'c' then return -1 end
local now = now_ms()
if action == 'cancel' then
  local lease_end = v[1] == 'a' and redis.call('ZSCORE', active, id)
  redis.call('ZREM', scheduled, v[2])
  redis.call('ZREM', active, id)
  redis.call('ZREM', dead, id)
  redis.call('DEL', key)
  if lease_end and tonumber(lease_end) > now then
    redis.call('HSET', key, 's', 'c')
    redis.call('PEXPIRE', key, int(tonumber(lease_end) - now))
  end
  return 1
end
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
