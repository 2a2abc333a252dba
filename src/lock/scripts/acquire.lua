-- Every acquire script: ARGV = {owner, lease ms, place-in-line ms (0 = do not
-- queue; fair and write only), grace ms, floor}. Returns {1, fencing token}
-- when acquired (or refreshed by the same owner), {0, ms until that may
-- change (the holder's pttl, or -1 unknown)} otherwise.
-- reentrant. KEYS = {L, L:fence[, L:line, L:line:until]}; ARGV[3] = the
-- hand-off turn ms (0: no line, plain barging; redlock), ARGV[6] = '1' when
-- the caller is starving (has waited past LockOptions::starvation_after).
-- Barging while nobody starves: whoever asks first while L is free gets it.
-- A starving caller that is refused joins the line; while the line is not
-- empty only its first waiter may take L (a release gives that waiter one
-- turn to come, release.lua), so nobody waits behind newcomers for ever.
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
local turn = tonumber(ARGV[3])
local starving = ARGV[6] == '1'
-- (Without the line keys, sent so while a cluster slot migrates: barging.)
local line = turn > 0 and KEYS[3] ~= nil
if not line or redis.call('EXISTS', KEYS[3]) == 0 then  -- nobody starves
  if holder == false then return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5]) end
  if not starving or not line then return {0, redis.call('PTTL', KEYS[1])} end
end
local now = now_ms()
local first = prune_line(KEYS[3], KEYS[4], now)
-- The key is free: the first waiter's turn has begun (it may be one that
-- died behind another dead one: each holds the others up one turn at most).
if holder == false and first and first ~= ARGV[1] then begin_turn(KEYS[4], first, now, turn) end
if holder == false and (first == false or first == ARGV[1]) then
  if first then leave_first(KEYS[3], KEYS[4], ARGV[1]) end
  return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5])
end
-- Refused: until the holder's lease, or the first waiter's turn, runs out.
local left
if holder then
  left = redis.call('PTTL', KEYS[1])
else
  left = math.max(1, tonumber(redis.call('ZSCORE', KEYS[4], first)) - now)
end
if starving then hold_place(KEYS[3], KEYS[4], ARGV[1], now + math.max(left, 0) + turn, math.max(left, 0) + turn) end
return {0, left}
