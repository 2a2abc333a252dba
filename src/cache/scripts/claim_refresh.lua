-- refresh_after: the right to reload an aged entry, one caller in the
-- deployment. KEYS = {entry, refresh claim}; ARGV = {version, written ms the
-- hit read, token, lease ms}. Returns 1 when claimed (also to a repeat of
-- the token's own claim), 0 when another caller holds the claim or the entry
-- changed since the read (nothing to refresh).
--@include _entry.lua
local entry = redis.call('GET', KEYS[1])
if not has_value(entry) or version_of(entry) ~= tonumber(ARGV[1]) or written_of(entry) ~= tonumber(ARGV[2]) then
  return 0
end
if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then return 1 end
if redis.call('GET', KEYS[2]) == ARGV[3] then
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  return 1
end
return 0
