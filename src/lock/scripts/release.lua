-- Exclusive release (reentrant, fair, write). KEYS = {L, L:fence[,
-- L:released_by[, L:line, L:line:until]]}; ARGV = {owner, channel, grace
-- ms[, hand-off turn ms]}.
-- Compare-and-delete; the counter is left to live the grace, and so is the
-- releasing owner in L:released_by: the same release sent again (its answer
-- lost) answers released as the first send did, even after another owner
-- took L. Wakes waiters
-- with one PUBLISH of '1' (anyone may try). With the line keys (reentrant)
-- and a starving waiter first in line, it publishes that waiter's owner
-- token instead (only it may take L; the others need not try), which has
-- the turn ms to take L or loses its place (a waiter that died does not hold
-- up the others). Returns 1 released, 0 lost.
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  live_at_most(KEYS[2], tonumber(ARGV[3]))
  if KEYS[3] then redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[3]) end
  local next = '1'
  if KEYS[4] and redis.call('EXISTS', KEYS[4]) == 1 then
    local now = now_ms()
    -- A place of the releasing owner itself (it took L by a call without the
    -- line keys, during a slot migration) goes.
    if redis.call('ZREM', KEYS[5], ARGV[1]) == 1 then redis.call('LREM', KEYS[4], 0, ARGV[1]) end
    local first = prune_line(KEYS[4], KEYS[5], now)
    if first then
      begin_turn(KEYS[5], first, now, tonumber(ARGV[4]))
      next = first
      -- The line's keys live as long as its longest place, now maybe shorter.
      -- (PEXPIRE, not PEXPIREAT: the one the least-privilege ACL rule grants.)
      local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
      local keep = math.max(1, tonumber(last[2]) - now)
      redis.call('PEXPIRE', KEYS[4], keep)
      redis.call('PEXPIRE', KEYS[5], keep)
    end
  end
  redis.call('PUBLISH', ARGV[2], next)
  return 1
end
if KEYS[3] and redis.call('GET', KEYS[3]) == ARGV[1] then return 1 end
return 0
