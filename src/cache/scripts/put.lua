-- A write (cache_put). KEYS = {entry}; ARGV = {json, ttl ms, now ms, channel,
-- invalidation}. Raises the version, so fills that read before it are
-- refused, and publishes the key's invalidation in the same step: no writer
-- can store a value and die before telling the other processes. Returns the
-- new version.
--@include _entry.lua
-- The channel is a broadcast one (every node of a cluster hears it), not
-- this key's slot: store/executor.h.
--@publishes_broadcast
local v = version_of(redis.call('GET', KEYS[1])) + 1
redis.call('SET', KEYS[1], v .. '@' .. ARGV[3] .. ':' .. ARGV[1], 'PX', ARGV[2])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return v
