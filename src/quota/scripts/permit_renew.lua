-- Extends a held permit. KEYS = {S, S:fence, S:tokens}; ARGV = {owner, lease
-- ms}. A permit whose lease ran out is not brought back (another caller may
-- hold it by now): returns 1 extended, 0 lost.
--@include _clock.lua
--@include _counter.lua
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
local now = now_ms()
if score == false or tonumber(score) <= now then return 0 end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], string.format('%d', now + lease), ARGV[1])
live_for(KEYS[1], 2 * lease)  -- (as permit_acquire.lua keeps them)
live_for(KEYS[2], 2 * lease)
live_for(KEYS[3], 2 * lease)
return 1
