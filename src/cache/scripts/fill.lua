-- A value loaded after a miss. KEYS = {entry}; ARGV = {json, ttl ms,
-- version the miss read}. Stored only if no write came since that read (the
-- version is unchanged); a fill keeps the version. Returns 1 stored, 0 refused.
--@include _entry.lua
local v = version_of(redis.call('GET', KEYS[1]))
if v ~= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], v .. ':' .. ARGV[1], 'PX', ARGV[2])
return 1
