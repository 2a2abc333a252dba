-- Every acquire script: ARGV = {owner, lease ms, place-in-line ms (0 = do not
-- queue; fair and write only), grace ms, floor}. Returns {1, fencing token}
-- when acquired (or refreshed by the same owner), {0, ms until that may
-- change (the holder's pttl, or -1 unknown)} otherwise.
-- write. KEYS = {L, L:fence, L:readers, L:readers:fence, L:writers}. Granted
-- when L is free and no reader's lease is live; otherwise the caller waits
-- in L:writers (which holds back new readers).
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local now = now_ms()
prune_rw(KEYS[3], KEYS[4], KEYS[5], now)
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
if holder == false and redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[5], ARGV[1])
  return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5])
end
local entry = tonumber(ARGV[3])
if entry > 0 then
  redis.call('ZADD', KEYS[5], now + entry, ARGV[1])
  live_for(KEYS[5], entry)
end
if holder then return {0, redis.call('PTTL', KEYS[1])} end
local r = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
return {0, math.max(1, tonumber(r[2]) - now)}
