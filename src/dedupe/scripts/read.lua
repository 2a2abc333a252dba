-- A key's record as it is, for operators (`weave dedupe show`), read-only.
-- KEYS = {record, record:at ("<ms> ..." from finish.lua)}. Returns {record
-- or false, its ms left, ms since its outcome was written (-1: unknown,
-- e.g. still running)}.
local record = redis.call('GET', KEYS[1])
if not record then return {false, 0, -1} end
local age = -1
local at = redis.call('GET', KEYS[2])
if at then
  local t = redis.call('TIME')
  age = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(string.match(at, '^%d+'))
end
return {record, redis.call('PTTL', KEYS[1]), age}
