-- Every acquire script: ARGV = {owner, lease ms, place-in-line ms (0 = do not
-- queue; fair and write only), grace ms, floor}. Returns {1, fencing token}
-- when acquired (or refreshed by the same owner), {0, ms until that may
-- change (the holder's pttl, or -1 unknown)} otherwise.
-- fair. KEYS = {L, L:fence, L:line, L:line:until}. Drops waiters whose place
-- ran out; grants when L is free and the caller is first in line (or the
-- line is empty); otherwise queues / refreshes the caller. When not
-- acquired: ms until the holder's lease or the first waiter's place runs out.
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local now = now_ms()
local first = prune_line(KEYS[3], KEYS[4], now)
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
if holder == false and (first == false or first == ARGV[1]) then
  if first then leave_first(KEYS[3], KEYS[4], ARGV[1]) end
  return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5])
end
local entry = tonumber(ARGV[3])
if entry > 0 then
  hold_place(KEYS[3], KEYS[4], ARGV[1], now + entry, entry)
  first = redis.call('LINDEX', KEYS[3], 0)
end
if holder then return {0, redis.call('PTTL', KEYS[1])} end
local until_ms = tonumber(redis.call('ZSCORE', KEYS[4], first) or now + 1)
return {0, math.max(1, until_ms - now)}
