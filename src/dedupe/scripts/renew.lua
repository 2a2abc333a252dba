-- Extends the caller's running claim. KEYS = {record}; ARGV = {the caller's
-- running record, lease ms}. Never recreates one. Returns 1 / 0.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
