-- read release. KEYS = {L:readers, L:readers:fence, L:fence};
-- ARGV = {owner, channel, grace ms}. Removes the reader (and readers whose
-- lease ran out); the keys then live only as long as the remaining readers
-- (the counter the grace more). The last one out wakes waiters (a writer may
-- go). Returns 1 released, 0 lost (not a reader any more, or its lease ran out).
--@include _counter.lua
--@include _types.lua
local now = now_ms()
local grace = tonumber(ARGV[3])
local until_ms = redis.call('ZSCORE', KEYS[1], ARGV[1])
if until_ms == false then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
prune_readers(KEYS[1], KEYS[2], now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #last == 0 then
  live_at_most(KEYS[3], grace)
  redis.call('PUBLISH', ARGV[2], '1')
else
  local left = math.max(1, tonumber(last[2]) - now)
  live_at_most(KEYS[1], left)
  live_at_most(KEYS[2], left)
  live_at_most(KEYS[3], left + grace)
end
if tonumber(until_ms) <= now then return 0 end
return 1
