-- read release. KEYS = {L:readers, L:readers:fence, L:fence[,
-- L:readers:released]}; ARGV = {owner, channel, grace ms}. Removes the
-- reader (and readers whose lease ran out); the keys then live only as long
-- as the remaining readers (the counter the grace more). The last one out
-- wakes waiters (a writer may go). A reader released in time stays in
-- L:readers:released for the grace: the same release sent again (its answer
-- lost) answers released as the first send did. Returns 1 released, 0 lost
-- (not a reader any more, or its lease ran out).
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local now = now_ms()
local grace = tonumber(ARGV[3])
local until_ms = redis.call('ZSCORE', KEYS[1], ARGV[1])
if until_ms == false then
  local kept = KEYS[4] and redis.call('ZSCORE', KEYS[4], ARGV[1])
  if kept and tonumber(kept) > now then return 1 end
  return 0
end
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
if KEYS[4] then
  -- (bounded: the releases of the last grace; PEXPIRE, not PEXPIREAT: the
  -- one the least-privilege ACL rule grants)
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  redis.call('ZADD', KEYS[4], now + grace, ARGV[1])
  redis.call('PEXPIRE', KEYS[4], grace)
end
return 1
