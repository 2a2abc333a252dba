-- Frees lock L by force (`weave unlock --force`): drops its holder and every
-- reader, raises the counter above every token handed out (a fenced store
-- then refuses the old holders' late writes), wakes the waiters; the line
-- stays. KEYS = {L, L:fence, L:readers, L:readers:fence};
-- ARGV = {channel, grace ms, floor}. Returns {{owner, ms left, token, ...}, counter}.
--@include _counter.lua
--@include _types.lua
local now = now_ms()
local freed = live_readers(KEYS[3], KEYS[4], now)
local holder = redis.call('GET', KEYS[1])
if holder then
  freed = {holder, tostring(redis.call('PTTL', KEYS[1])), redis.call('GET', KEYS[2]) or '0'}
  redis.call('DEL', KEYS[1])
end
redis.call('DEL', KEYS[3], KEYS[4])
local fence = next_fence(KEYS[2], ARGV[3])
live_for(KEYS[2], tonumber(ARGV[2]))
redis.call('PUBLISH', ARGV[1], '1')
return {freed, fence}  -- (a number: tostring would round it)
