-- Exclusive release (reentrant, fair, write). KEYS = {L, L:fence};
-- ARGV = {owner, channel, grace ms}. Compare-and-delete; the counter is left
-- to live the grace; wakes waiters with one PUBLISH. Returns 1 released, 0 lost.
--@include _counter.lua
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  live_at_most(KEYS[2], tonumber(ARGV[3]))
  redis.call('PUBLISH', ARGV[2], '1')
  return 1
end
return 0
