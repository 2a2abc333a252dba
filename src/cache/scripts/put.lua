-- A write (cache_put). KEYS = {entry}; ARGV = {json, ttl ms, now ms}. Raises
-- the version, so fills that read before it are refused. Returns the new version.
--@include _entry.lua
local v = version_of(redis.call('GET', KEYS[1])) + 1
redis.call('SET', KEYS[1], v .. '@' .. ARGV[3] .. ':' .. ARGV[1], 'PX', ARGV[2])
return v
