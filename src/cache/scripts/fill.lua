-- A value loaded after a miss (or a refresh). KEYS = {entry, fill lease,
-- refresh claim}; ARGV = {json, ttl ms, version the miss read, now ms, token}.
-- Stored only if no write came since that read (the version is unchanged); a
-- fill keeps the version. Drops the leases `token` holds in the same step, so
-- a waiter woken by it reads the value. Returns 1 stored, 0 refused, + 2 when
-- a waiter is to be woken.
--@include _entry.lua
--@include _lease.lua
local woke = release_leases(2, ARGV[5])
local v = version_of(redis.call('GET', KEYS[1]))
if v ~= tonumber(ARGV[3]) then return woke end
redis.call('SET', KEYS[1], v .. '@' .. ARGV[4] .. ':' .. ARGV[1], 'PX', ARGV[2])
return 1 + woke
