-- Exclusive release (reentrant, fair, write). KEYS = {L, L:fence[, L:line,
-- L:line:until]}; ARGV = {owner, channel, grace ms[, hand-off turn ms]}.
-- Compare-and-delete; the counter is left to live the grace; wakes waiters
-- with one PUBLISH of '1' (anyone may try). With the line keys (reentrant)
-- and a starving waiter first in line, it publishes that waiter's owner
-- token instead (only it may take L; the others need not try), which has
-- the turn ms to take L or loses its place (a waiter that died does not hold
-- up the others). Returns 1 released, 0 lost.
--@include _counter.lua
--@include _types.lua
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  live_at_most(KEYS[2], tonumber(ARGV[3]))
  local next = '1'
  if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 1 then
    local now = now_ms()
    -- A place of the releasing owner itself (it took L by a call without the
    -- line keys, during a slot migration) goes.
    if redis.call('ZREM', KEYS[4], ARGV[1]) == 1 then redis.call('LREM', KEYS[3], 0, ARGV[1]) end
    local first = prune_line(KEYS[3], KEYS[4], now)
    if first then
      begin_turn(KEYS[4], first, now, tonumber(ARGV[4]))
      next = first
      -- The line's keys live as long as its longest place, now maybe shorter.
      -- (PEXPIRE, not PEXPIREAT: the one the least-privilege ACL rule grants.)
      local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
      local keep = math.max(1, tonumber(last[2]) - now)
      redis.call('PEXPIRE', KEYS[3], keep)
      redis.call('PEXPIRE', KEYS[4], keep)
    end
  end
  redis.call('PUBLISH', ARGV[2], next)
  return 1
end
return 0
