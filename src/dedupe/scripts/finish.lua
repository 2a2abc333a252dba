-- Replaces the caller's running claim by its outcome. KEYS = {record,
-- record:at}; ARGV = {the caller's running record, outcome, window ms,
-- channel}. record:at keeps "<server ms> <running record>" for the same
-- window: when the outcome was written (the record's age for `weave dedupe
-- show`) and which claim wrote it. Wakes waiting duplicates. Returns 1, or
-- 0 when the claim is not the caller's any more (it ran out, and maybe
-- another call claimed the key). The same finish sent again (its answer
-- was lost) finds its own outcome written by its own claim, and answers 1.
local record = redis.call('GET', KEYS[1])
if record ~= ARGV[1] then
  if record ~= ARGV[2] then return 0 end
  local at = redis.call('GET', KEYS[2])
  local own = ' ' .. ARGV[1]
  if at and string.sub(at, -#own) == own then return 1 end
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
local t = redis.call('TIME')
redis.call('SET', KEYS[2], string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) .. ' ' ..
  ARGV[1], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], '1')
return 1
