-- Helpers of every script: expiries and the fencing counter.
-- Key k lives at least ms more (never shortened): one PEXPIRE ... GT, and a
-- PTTL only when that changed nothing (a longer expiry, or none yet: GT
-- takes a key without one for one that never ends).
local function live_for(k, ms)
  if redis.call('PEXPIRE', k, ms, 'GT') == 0 and redis.call('PTTL', k) == -1 then
    redis.call('PEXPIRE', k, ms)
  end
end
-- Key k lives at most ms more (a key without expiry gets one).
local function live_at_most(k, ms)
  local left = redis.call('PTTL', k)
  if left == -1 or left > ms then redis.call('PEXPIRE', k, ms) end
end
-- The next fencing token of counter k (its expiry is kept: callers extend it).
-- A new counter starts at the server's TIME in us; without the clock floor
-- (redlock://) rounded down to the millisecond, so masters whose clocks agree
-- within it start equal and the acquisition needs no raise round trip (a
-- restarted master still seeds past every token: a restart takes longer).
local function next_fence(k, floor)
  local c = redis.call('GET', k)
  if c == false or floor == '1' then
    local t = redis.call('TIME')
    local us = tonumber(t[2])
    if floor ~= '1' then us = us - us % 1000 end
    local now = t[1] .. string.format('%06d', us)
    if c == false or tonumber(c) < tonumber(now) then
      redis.call('SET', k, now, 'KEEPTTL')
      return tonumber(now)
    end
  end
  return redis.call('INCR', k)
end
-- The caller takes the exclusive key for ms: its new token.
local function take(lock, counter, owner, ms, grace, floor)
  local fence = next_fence(counter, floor)
  redis.call('SET', lock, owner, 'PX', ms)
  live_for(counter, ms + grace)
  return {1, fence}
end
-- The caller holds it already (a resent acquire): extend, same token. Nobody
-- else can have moved the counter while the lease is held, and it outlives
-- the lease; should it be gone anyway (evicted, deleted by hand), a new
-- token from a fresh counter, never 0 or a value handed out since.
local function refresh(lock, counter, ms, grace, floor)
  redis.call('PEXPIRE', lock, ms)
  local fence = redis.call('GET', counter)
  if fence == false then fence = next_fence(counter, floor) end
  live_for(counter, ms + grace)
  return {1, tonumber(fence)}
end
