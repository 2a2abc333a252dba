-- Every acquire script: ARGV = {owner, lease ms, place-in-line ms (0 = do not
-- queue; fair and write only), grace ms, floor}. Returns {1, fencing token}
-- when acquired (or refreshed by the same owner), {0, ms until that may
-- change (the holder's pttl, or -1 unknown)} otherwise.
-- reentrant. KEYS = {L, L:fence}.
--@include _counter.lua
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local holder = redis.call('GET', KEYS[1])
if holder == false then return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5]) end
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
return {0, redis.call('PTTL', KEYS[1])}
