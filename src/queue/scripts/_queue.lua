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

-- Delivers the first due message under a lease (after reclaim()). Returns
-- {1, now, id, payload, fencing token, due, deliveries, failures, retries,
-- last error} or {0, now, next}: next is when to look again (the first due
-- time or lease deadline; -1: nothing queued).
local function take_first(now, lease)
  while true do
    local first = redis.call('ZRANGEBYSCORE', scheduled, '-inf', now, 'LIMIT', 0, 1)[1]
    if not first then break end
    redis.call('ZREM', scheduled, first)
    local id = string.sub(first, 17)
    local key = message_key(id)
    local v = redis.call('HMGET', key, 'b', 'due', 'f', 'r', 'e')
    if v[1] then
      local token = redis.call('INCR', counter)
      local deliveries = redis.call('HINCRBY', key, 'n', 1)
      redis.call('HSET', key, 's', 'a', 't', token)
      redis.call('ZADD', active, now + lease, id)
      return {1, now, id, v[1], token, tonumber(v[2]), deliveries, tonumber(v[3]), tonumber(v[4]), v[5]}
    end
    -- (a schedule entry without its message: dropped, never delivered empty)
  end
  local next = -1
  local z = redis.call('ZRANGE', scheduled, 0, 0, 'WITHSCORES')[2]
  if z then next = tonumber(z) end
  local a = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')[2]
  if a and (next < 0 or tonumber(a) < next) then next = tonumber(a) end
  return {0, now, next}
end

-- Settles the in-flight message `id` for the holder of `token`: action 'ack'
-- (done: removed), 'retry' (again after `value` ms, not a failure), 'fail'
-- (a failed attempt, `value` the reason), 'dead' (dead-lettered now, `value`
-- the reason). Returns 1 settled, 2 dead-lettered, 0 taken back (its lease
-- ran out and it was reclaimed, maybe redelivered), -1 gone (cancelled, or
-- settled already).
local function settle(id, token, action, value, now, jitter)
  local key = message_key(id)
  local v = redis.call('HMGET', key, 's', 't', 'm')
  if not v[1] then return -1 end
  if v[1] ~= 'a' or v[2] ~= token then return 0 end
  redis.call('ZREM', active, id)
  if action == 'ack' then
    redis.call('DEL', key)
    return 1
  elseif action == 'retry' then
    schedule(key, v[3], now + tonumber(value))
    return 1
  elseif action == 'fail' then
    return fail_attempt(id, now, value, jitter)
  end
  redis.call('HSET', key, 's', 'd', 't', '', 'e', value)
  redis.call('ZADD', dead, now, id)
  return 2
end
