-- A schedule's last tick offered (batch.lua's tick offers) and the server's
-- clock. ARGV = {base, wake, schedule}. Returns {last tick ms or -1, now ms}.
--@include _clock.lua
--@include _queue.lua
local last = redis.call('HGET', ticks_key(), ARGV[3])
return {last and tonumber(last) or -1, now_ms()}
