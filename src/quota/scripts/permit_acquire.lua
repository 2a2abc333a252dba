-- Takes one permit of a semaphore, or a place in its line. KEYS = {S (holders:
-- owner -> lease deadline, server ms), S:fence (fencing counter), S:tokens
-- (owner -> its fencing token), S:line (waiters: owner -> arrival, server us),
-- S:line:until (owner -> when its place runs out, server ms)}; ARGV = {owner,
-- permits, lease ms, place ms (0: the caller does not wait), channel}.
-- Holders whose lease ran out are dropped first (their permits reclaimed), so
-- a crashed holder costs one lease. Waiters are served in arrival order: the
-- caller takes a permit only when fewer waiters are ahead of it than permits
-- are free. A holder asking again (its reply was lost, or a release granted
-- it the permit directly: _permit.lua) gets its grant again.
-- Returns {1, fencing token, reclaimed} or {0, ms until worth asking again,
-- reclaimed}.
--@include _clock.lua
--@include _counter.lua
--@include _permit.lua
local owner, permits, lease, place = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
local held = redis.call('ZCARD', KEYS[1])
local dead = {}
if held > 0 then
  dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  if #dead > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    for _, o in ipairs(dead) do redis.call('HDEL', KEYS[3], o) end
    held = held - #dead
  end
  if redis.call('ZSCORE', KEYS[1], owner) then
    redis.call('ZADD', KEYS[1], int(now + lease), owner)
    keep(lease, false)
    local token = redis.call('HGET', KEYS[3], owner)
    if token == false then  -- (the tokens gone by hand: a new one)
      token = next_fence(KEYS[2], '1')
      redis.call('HSET', KEYS[3], owner, int(token))
    end
    return {1, tonumber(token), #dead}
  end
end
-- The callers ahead in line (all of them when this one has no place).
local rank, ahead = false, 0
if redis.call('EXISTS', KEYS[4]) == 1 then
  drop_gone_places(now)
  rank = redis.call('ZRANK', KEYS[4], owner)
  ahead = rank or redis.call('ZCARD', KEYS[4])
end
local free = permits - held
if ahead < free then
  if rank ~= false then
    redis.call('ZREM', KEYS[4], owner)
    redis.call('ZREM', KEYS[5], owner)
  end
  local token = grant(owner, now, lease, held == 0)
  -- Reclaimed permits beyond this one: the waiters behind may take them.
  if #dead > 1 and redis.call('EXISTS', KEYS[4]) == 1 then wake_line(ARGV[5], permits, lease) end
  return {1, token, #dead}
end
if place > 0 then
  if redis.call('ZSCORE', KEYS[4], owner) == false then
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[4], t[1] .. string.format('%06d', tonumber(t[2])), owner)
  end
  redis.call('ZADD', KEYS[5], int(now + place), owner)
  live_for(KEYS[4], place)
  live_for(KEYS[5], place)
end
-- Worth asking again when the first holder's lease runs out, or (permits
-- free, waiters ahead) when the first waiter's place does.
local first = redis.call('ZRANGE', free > 0 and KEYS[5] or KEYS[1], 0, 0, 'WITHSCORES')
local retry = 1
if first[2] then retry = math.max(1, tonumber(first[2]) - now) end
return {0, retry, #dead}
