-- Gives a permit back. KEYS = {S, S:tokens, S:line}; ARGV = {owner, channel}.
-- Wakes the line's waiters (one PUBLISH) when there are any. Returns 1 when
-- the permit was still held, 0 when it had run out (lost) or was not there.
--@include _clock.lua
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score == false then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PUBLISH', ARGV[2], '1') end
if tonumber(score) <= now_ms() then return 0 end
return 1
