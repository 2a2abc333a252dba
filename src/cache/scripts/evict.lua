-- An eviction (cache_evict). KEYS = {entry}; ARGV = {tombstone ms, channel,
-- invalidation}. Leaves a tombstone with a raised version for the
-- tombstone's time (fills that read before it are refused), then nothing, and
-- publishes the key's invalidation in the same step (as put.lua does).
-- Returns the new version.
--@include _entry.lua
-- The channel is a broadcast one (every node of a cluster hears it), not
-- this key's slot: store/executor.h.
--@publishes_broadcast
local v = version_of(redis.call('GET', KEYS[1])) + 1
redis.call('SET', KEYS[1], v .. ':', 'PX', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return v
