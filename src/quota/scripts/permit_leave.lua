-- A waiter that gives up leaves the line. KEYS and ARGV as permit_release.lua's.
-- A release may have granted it a permit meanwhile (its message not read
-- yet): that permit is given back (to the next waiter). Otherwise those
-- behind it may be next now: they are woken.
--@include _clock.lua
--@include _counter.lua
--@include _permit.lua
local owner = ARGV[1]
if redis.call('ZSCORE', KEYS[1], owner) then
  give_back(owner, now_ms(), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4])
elseif redis.call('ZREM', KEYS[4], owner) == 1 then
  redis.call('ZREM', KEYS[5], owner)
  if redis.call('EXISTS', KEYS[4]) == 1 then wake_line(ARGV[4], tonumber(ARGV[2]), tonumber(ARGV[3])) end
end
return 1
