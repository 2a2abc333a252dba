-- Replaces the caller's running claim by its outcome. KEYS = {record,
-- record:at}; ARGV = {the caller's running record, outcome, window ms,
-- channel}. record:at keeps when the outcome was written (server ms) for
-- the same window: the record's age for `weave dedupe show`. Wakes waiting
-- duplicates. Returns 1, or 0 when the claim is not the caller's any more
-- (it ran out, and maybe another call claimed the key).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
local t = redis.call('TIME')
redis.call('SET', KEYS[2], string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)), 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], '1')
return 1
