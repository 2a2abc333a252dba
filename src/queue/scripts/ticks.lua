-- A schedule's last tick offered (batch.lua's tick offers), its missed
-- ticks, its last run's record, the queue's live messages (scheduled or in
-- flight, read in the same step: a worker plans only for a queue with
-- none), whether it is paused, and the server's clock.
-- ARGV = {base, wake, schedule}.
-- Returns {last tick ms or -1, now ms, missed, record or '', live, paused 0|1}.
--@include _clock.lua
--@include _queue.lua
local last = redis.call('HGET', ticks_key(), ARGV[3])
local missed = redis.call('HGET', missed_key(), ARGV[3])
return {last and tonumber(last) or -1, now_ms(), missed and tonumber(missed) or 0,
        redis.call('HGET', runs_key(), ARGV[3]) or '', redis.call('ZCARD', scheduled) + redis.call('ZCARD', active),
        redis.call('HGET', paused_key(), ARGV[3]) and 1 or 0}
