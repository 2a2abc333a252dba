-- Drops the caller's running claim (a failed call that leaves no record).
-- KEYS = {record}; ARGV = {the caller's running record, channel}. Returns 1 / 0.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], '1')
return 1
