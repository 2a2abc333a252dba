-- A semaphore as it is, for operators. KEYS = {S, S:tokens, S:line,
-- S:line:until}. Returns {waiting, owner1, ms left1, token1, owner2, ...}:
-- the live holders, and how many live places the line has.
--@include _clock.lua
local now = now_ms()
local out = {redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')}
local held = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #held, 2 do
  out[#out + 1] = held[i]
  out[#out + 1] = tonumber(held[i + 1]) - now
  out[#out + 1] = tonumber(redis.call('HGET', KEYS[2], held[i]) or '0')
end
return out
