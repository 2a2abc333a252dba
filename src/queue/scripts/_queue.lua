-- Shared by the queue's scripts (pulled in with --@include). Every script of
-- one queue gets KEYS = {scheduled, active, dead, counter[, message]} and
-- ARGV = {base, wake channel, ...}: all keys share the queue's {hash tag}.
-- Due times and lease deadlines are the server's clock (TIME) in ms; no
-- client clock is ever read.
local scheduled, active, dead, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, wake = ARGV[1], ARGV[2]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function message_key(id) return base .. ':m:' .. id end

-- The wait before attempt `failures` + 1: `first` doubled per failure,
-- capped, its upper half jittered (`jitter` in [0, 1), from the client).
local function backoff(failures, first, cap, jitter)
  local d = first * 2 ^ (failures - 1)
  if d > cap then d = cap end
  return math.floor(d / 2 + d / 2 * jitter)
end

-- Puts a message (back) on the schedule; wakes waiting consumers when it
-- is now the first due.
local function schedule(key, member, due)
  redis.call('HSET', key, 's', 'z', 'due', due, 't', '')
  redis.call('ZADD', scheduled, due, member)
  if redis.call('ZRANGE', scheduled, 0, 0)[1] == member then redis.call('PUBLISH', wake, due) end
end

-- One failed attempt of an in-flight message (already out of `active`):
-- scheduled again after its backoff, or dead once its retries are spent.
-- Returns 1 (scheduled again) or 2 (dead).
local function fail_attempt(id, now, reason, jitter)
  local key = message_key(id)
  local failures = redis.call('HINCRBY', key, 'f', 1)
  local v = redis.call('HMGET', key, 'r', 'bo', 'bc', 'm')
  redis.call('HSET', key, 'e', reason)
  if failures > tonumber(v[1]) then
    redis.call('HSET', key, 's', 'd', 't', '')
    redis.call('ZADD', dead, now, id)
    return 2
  end
  schedule(key, v[4], now + backoff(failures, tonumber(v[2]), tonumber(v[3]), jitter))
  return 1
end

-- Deliveries whose lease ran out by `now`: each a failed attempt (a worker
-- that died, was stopped or hung gets no more than one that threw).
local function reclaim(now, jitter)
  local expired = redis.call('ZRANGEBYSCORE', active, '-inf', now, 'LIMIT', 0, 100)
  for _, id in ipairs(expired) do
    redis.call('ZREM', active, id)
    fail_attempt(id, now, 'its delivery lease ran out before it was settled (the worker died, was stopped or hung)', jitter)
  end
end
