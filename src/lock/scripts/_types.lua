-- Helpers of the lock types: the line of waiters (fair,
-- and reentrant's starving waiters), and dropping readers and waiting writers
-- whose time ran out.
-- Drops the waiters whose place in line ran out by `now`; returns the first
-- waiter left (false when none). line: owners in arrival order (list);
-- places: owner -> expiry of its place, server ms (zset).
local function prune_line(line, places, now)
  local dead = redis.call('ZRANGEBYSCORE', places, '-inf', now)
  for _, o in ipairs(dead) do redis.call('LREM', line, 0, o) end
  if #dead > 0 then redis.call('ZREMRANGEBYSCORE', places, '-inf', now) end
  local first = redis.call('LINDEX', line, 0)
  while first and redis.call('ZSCORE', places, first) == false do  -- (its place is gone with its key)
    redis.call('LPOP', line)
    first = redis.call('LINDEX', line, 0)
  end
  return first
end
-- The key is free: the first waiter's (`first`) turn has begun; its place
-- ends turn_ms from now at the latest.
local function begin_turn(places, first, now, turn_ms)
  redis.call('ZADD', places, 'XX', 'LT', now + turn_ms, first)
end
-- The first waiter takes its turn: it leaves the line.
local function leave_first(line, places, owner)
  redis.call('LPOP', line)
  redis.call('ZREM', places, owner)
end
-- Queues owner at the end of the line, or keeps its place, which now runs
-- out at server ms `until_ms` (keep_ms from now).
local function hold_place(line, places, owner, until_ms, keep_ms)
  if redis.call('ZSCORE', places, owner) == false then redis.call('RPUSH', line, owner) end
  redis.call('ZADD', places, until_ms, owner)
  live_for(line, keep_ms)
  live_for(places, keep_ms)
end
local function prune_readers(readers, reader_fences, now)
  local gone = redis.call('ZRANGEBYSCORE', readers, '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
    redis.call('HDEL', reader_fences, unpack(gone))
  end
end
local function prune_rw(readers, reader_fences, writers, now)
  prune_readers(readers, reader_fences, now)
  redis.call('ZREMRANGEBYSCORE', writers, '-inf', now)
end
-- The live readers as {owner, ms left, token, ...} (operators' views).
local function live_readers(readers, reader_fences, now)
  local out = {}
  local live = redis.call('ZRANGEBYSCORE', readers, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #live, 2 do
    out[#out + 1] = live[i]
    out[#out + 1] = tostring(tonumber(live[i + 1]) - now)
    out[#out + 1] = redis.call('HGET', reader_fences, live[i]) or '0'
  end
  return out
end
