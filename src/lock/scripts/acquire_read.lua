-- Every acquire script: ARGV = {owner, lease ms, place-in-line ms (0 = do not
-- queue; fair and write only), grace ms, floor}. Returns {1, fencing token}
-- when acquired (or refreshed by the same owner), {0, ms until that may
-- change (the holder's pttl, or -1 unknown)} otherwise.
-- read. KEYS = {L, L:fence, L:readers, L:readers:fence, L:writers}. Granted
-- unless a writer holds L or a writer waits (writer preference). Each reader
-- keeps its own token in L:readers:fence; the counter outlives every reader
-- by the grace.
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local lease, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local now = now_ms()
prune_rw(KEYS[3], KEYS[4], KEYS[5], now)
local function keep(fence)
  redis.call('ZADD', KEYS[3], now + lease, ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], fence)
  live_for(KEYS[3], lease)
  live_for(KEYS[4], lease)
  live_for(KEYS[2], lease + grace)
  return {1, tonumber(fence)}
end
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return keep(redis.call('HGET', KEYS[4], ARGV[1]) or next_fence(KEYS[2], ARGV[5]))
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('PTTL', KEYS[1])} end
local w = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
if #w > 0 then return {0, math.max(1, tonumber(w[2]) - now)} end
return keep(next_fence(KEYS[2], ARGV[5]))
