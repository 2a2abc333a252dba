-- Claims a key in one step. KEYS = {record}; ARGV = {running record, lease ms}.
-- What SET NX PX GET does in one command (claim_redis.cpp), for a server
-- before Redis 7.0 and for a cluster ASK redirect.
-- Returns {1} when claimed, else {0, the record, its ms left}.
local found = redis.call('GET', KEYS[1])
if not found then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1}
end
return {0, found, redis.call('PTTL', KEYS[1])}
