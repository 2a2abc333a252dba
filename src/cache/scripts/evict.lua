-- An eviction (cache_evict). KEYS = {entry}; ARGV = {tombstone ms}. Leaves a
-- tombstone with a raised version for the tombstone's time (fills that read
-- before it are refused), then nothing. Returns the new version.
--@include _entry.lua
local v = version_of(redis.call('GET', KEYS[1])) + 1
redis.call('SET', KEYS[1], v .. ':', 'PX', ARGV[1])
return v
