-- Helpers of the permit scripts, over KEYS = {S (holders: owner -> lease
-- deadline, server ms), S:fence, S:tokens (owner -> fencing token), S:line
-- (waiters: owner -> arrival, server us), S:line:until (owner -> when its
-- place runs out, server ms)}. Needs _clock.lua and _counter.lua.
-- (Numbers go to commands as integer text: Lua's default keeps 14 digits.)
local function int(n) return string.format('%d', n) end
-- The keys outlive their holders' leases by one more: a dead holder is still
-- there for the next request to reclaim (and count) within a lease of its end.
-- `first`: the holders (and so their tokens) were none before this grant, so
-- both keys are new: their expiry is set, not compared.
local function keep(lease, first)
  if first then
    redis.call('PEXPIRE', KEYS[1], 2 * lease)
    redis.call('PEXPIRE', KEYS[3], 2 * lease)
  else
    live_for(KEYS[1], 2 * lease)
    live_for(KEYS[3], 2 * lease)
  end
  live_for(KEYS[2], 2 * lease)
end
-- Waiters whose place ran out (they stopped asking) leave the line.
local function drop_gone_places(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
    for _, o in ipairs(gone) do redis.call('ZREM', KEYS[4], o) end
  end
end
-- A new permit for owner (`first`: nobody held one): its fencing token.
local function grant(owner, now, lease, first)
  local token = next_fence(KEYS[2], '1')
  redis.call('ZADD', KEYS[1], int(now + lease), owner)
  redis.call('HSET', KEYS[3], owner, int(token))
  keep(lease, first)
  return token
end
-- A waiter whose owner ends in '+' waits on its inbox, the list
-- S:inbox:<owner>, blocked on a connection of its own (BLPOP): it is told
-- there, not on the channel. What nobody pops is gone after `ttl` ms. The
-- inbox is not among KEYS (its name is the waiter's): while the slot
-- migrates the server may refuse it, and the waiter then learns what it
-- missed at its next request (pcall: the step stands either way).
local function tell(owner, message, ttl)
  if string.sub(owner, -1) ~= '+' then return false end
  local inbox = KEYS[1] .. ':inbox:' .. owner
  local pushed = redis.pcall('RPUSH', inbox, message)
  if type(pushed) == 'table' and pushed.err then return true end
  redis.pcall('PEXPIRE', inbox, ttl)
  return true
end
-- Wakes the line to ask again: '1' on the channel, and in the inboxes of
-- the first waiters, as many as permits are free of `permits` (at least
-- one): those that may take one now.
local function wake_line(channel, permits, ttl)
  redis.call('PUBLISH', channel, '1')
  local n = math.max(1, permits - redis.call('ZCARD', KEYS[1]))
  for _, o in ipairs(redis.call('ZRANGE', KEYS[4], 0, n - 1)) do tell(o, '1', ttl) end
end
-- Takes owner's permit back. With fewer than `permits` then held, it goes
-- straight to the first waiter in line, announced on `channel` as
-- "<owner> <token>" (or told in its inbox): that waiter starts without a
-- request of its own, and the others are not woken for a permit they could
-- not take. The grant lasts
-- `place` ms (as the waiter's place would have), until the waiter's first
-- renewal: a waiter that died since holds it up no longer. Otherwise the
-- line is woken ("1") to ask again.
local function give_back(owner, now, permits, place, channel)
  redis.call('ZREM', KEYS[1], owner)
  redis.call('HDEL', KEYS[3], owner)
  if redis.call('EXISTS', KEYS[4]) == 0 then return end  -- nobody waits
  drop_gone_places(now)
  local first = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  if first == nil then return end
  local held = redis.call('ZCARD', KEYS[1])
  if held < permits then
    redis.call('ZREM', KEYS[4], first)
    redis.call('ZREM', KEYS[5], first)
    local message = first .. ' ' .. int(grant(first, now, place, held == 0))
    if not tell(first, message, place) then redis.call('PUBLISH', channel, message) end
  else
    wake_line(channel, permits, place)
  end
end
