-- Raises a master's fencing counter to at least ARGV[1] (never lowers it),
-- keeping it at least ARGV[2] ms (the lease + grace). KEYS = {L:fence}. Sent
-- after an acquisition whose majority answered different counters, so that
-- every master of that majority is at least at the token handed out (see
-- docs/scale-out.md, "Fencing tokens"). Returns 1.
--@include _counter.lua
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL') end
live_for(KEYS[1], tonumber(ARGV[2]))
return 1
