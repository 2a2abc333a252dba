-- A waiter that gives up leaves the line. KEYS = {S:line, S:line:until};
-- ARGV = {owner, channel}. Those behind it may be next now: wakes them.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PUBLISH', ARGV[2], '1') end
end
return 1
