-- Pauses a schedule or resumes it. ARGV = {base, wake, schedule, 1 pause |
-- 0 resume}. Paused, its tick offers are refused (batch.lua). Resumed, its
-- last tick offered becomes now if earlier: the next tick planned is the
-- first after now, and the pause's ticks count as neither run nor missed.
-- Returns 1.
--@include _clock.lua
--@include _queue.lua
local schedule = ARGV[3]
if ARGV[4] == '1' then
  redis.call('HSET', paused_key(), schedule, '1')
  return 1
end
if redis.call('HDEL', paused_key(), schedule) == 1 then
  local now = now_ms()
  local last = redis.call('HGET', ticks_key(), schedule)
  if not last or tonumber(last) < now then redis.call('HSET', ticks_key(), schedule, int(now)) end
end
return 1
