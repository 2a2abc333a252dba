-- Frees lock L by force (`weave unlock --force`): drops its holder and every
-- reader, raises the counter above every token handed out (a fenced store
-- then refuses the old holders' late writes), wakes the waiters; the line
-- stays. KEYS = {L, L:fence, L:readers, L:readers:fence, L:forced};
-- ARGV = {channel, grace ms, floor, request id}. Returns {{owner, ms left,
-- token, ...}, counter}. The request's answer is kept under L:forced for the
-- grace: the same request sent again (its reply lost) gets that answer and
-- frees nothing taken since.
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local kept = redis.call('GET', KEYS[5])
if kept then
  local parts = {}  -- request id, counter, then the freed (owner, ms left, token)...
  for p in (kept .. '\n'):gmatch('(.-)\n') do parts[#parts + 1] = p end
  if parts[1] == ARGV[4] then
    local freed = {}
    for i = 3, #parts do freed[#freed + 1] = parts[i] end
    return {freed, tonumber(parts[2])}
  end
end
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
local answer = ARGV[4] .. '\n' .. string.format('%d', fence)
for _, f in ipairs(freed) do answer = answer .. '\n' .. f end
redis.call('SET', KEYS[5], answer, 'PX', ARGV[2])
return {freed, fence}  -- (a number: tostring would round it)
