-- Messages of one state for operators (`weave queue peek|dead`), read-only.
-- ARGV = {base, wake, 'z' (scheduled, by due time) or 'd' (dead, newest
-- first), limit}. Returns {{id, due, deliveries, failures, last error,
-- payload}, ...}.
--@include _clock.lua
--@include _queue.lua
local limit = tonumber(ARGV[4])
local members
if ARGV[3] == 'd' then
  members = redis.call('ZRANGE', dead, 0, limit - 1, 'REV')
else
  members = redis.call('ZRANGE', scheduled, 0, limit - 1)
end
local out = {}
for _, member in ipairs(members) do
  local id = member
  if ARGV[3] ~= 'd' then id = string.sub(member, 17) end  -- (a schedule member is a 16-digit sequence + the id)
  local v = redis.call('HMGET', message_key(id), 'due', 'n', 'f', 'e', 'b')
  if v[5] then out[#out + 1] = {id, tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0, v[4] or '', v[5]} end
end
return out
