-- Gives a permit back. KEYS = {S, S:fence, S:tokens, S:line, S:line:until}
-- (_permit.lua); ARGV = {owner, permits, place ms, channel}. The permit goes
-- to the first waiter in line, if any, for a place's time (give_back). Returns 1 when it was
-- still held, 0 when it had run out (lost) or was not there.
--@include _clock.lua
--@include _counter.lua
--@include _permit.lua
local owner = ARGV[1]
local score = redis.call('ZSCORE', KEYS[1], owner)
if score == false then return 0 end
local now = now_ms()
give_back(owner, now, tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
if tonumber(score) <= now then return 0 end
return 1
