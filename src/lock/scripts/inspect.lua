-- An operator's view of one lock (`weave locks`), read-only.
-- KEYS = {L, L:fence, L:line, L:readers, L:readers:fence, L:writers}.
-- Returns {holder or '', its ms left, counter or '0', {fair line...},
-- {reader, ms left, token, ...}, {waiting writer...}}.
--@include _clock.lua
--@include _types.lua
local now = now_ms()
local holder, left = redis.call('GET', KEYS[1]), 0
if holder then left = redis.call('PTTL', KEYS[1]) else holder = '' end
local fence = redis.call('GET', KEYS[2]) or '0'
local line = {}
for i = 0, 999 do
  local owner = redis.call('LINDEX', KEYS[3], i)
  if not owner then break end
  line[#line + 1] = owner
end
return {holder, left, fence, line, live_readers(KEYS[4], KEYS[5], now),
        redis.call('ZRANGEBYSCORE', KEYS[6], '(' .. now, '+inf')}
