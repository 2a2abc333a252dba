-- sync=true: the right to load a missing key, one caller in the deployment.
-- KEYS = {entry, fill lease}; ARGV = {token, lease ms, version the miss read}.
-- Returns 1: the caller loads (holds the lease); 0: read again (filled or
-- written since the miss); -n: another caller holds it for n more ms (it is
-- marked so that its release publishes a wake). Sent again by the caller
-- (its first answer lost), it answers 1 again: the lease is the token's.
--@include _entry.lua
local entry = redis.call('GET', KEYS[1])
if has_value(entry) or version_of(entry) ~= tonumber(ARGV[3]) then return 0 end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
local held = redis.call('GET', KEYS[2])
if held == ARGV[1] or held == ARGV[1] .. '+' then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return 1
end
local left = redis.call('PTTL', KEYS[2])
if left < 1 then left = 1 end
if string.sub(held, -1) ~= '+' then redis.call('SET', KEYS[2], held .. '+', 'PX', left) end
return -left
