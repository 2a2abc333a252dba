-- Replaces the caller's running claim by its outcome. KEYS = {record};
-- ARGV = {the caller's running record, outcome, window ms, channel}. Wakes
-- waiting duplicates. Returns 1, or 0 when the claim is not the caller's any
-- more (it ran out, and maybe another call claimed the key).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], '1')
return 1
