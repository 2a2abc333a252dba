-- Shared by the queue's scripts (pulled in with --@include). Every script of
-- one queue gets KEYS = {scheduled, active, dead, counter[, message]} and
-- ARGV = {base, wake channel, ...}: all keys share the queue's {hash tag}.
-- Due times and lease deadlines are the server's clock (TIME) in ms; no
-- client clock is ever read.
local scheduled, active, dead, counter = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, wake = ARGV[1], ARGV[2]

local function message_key(id) return base .. ':m:' .. id end
-- Each schedule's last tick offered (ms), its missed ticks counted, its
-- last run's record (JSON from the worker) and whether it is paused: hashes
-- of the queue's hash tag.
local function ticks_key() return base .. ':ticks' end
local function missed_key() return base .. ':missed' end
local function runs_key() return base .. ':runs' end
local function paused_key() return base .. ':paused' end

-- An integer (ms, counters) as a command argument: formatted as one, not
-- through Lua's float conversion, which costs more on every call.
local function int(x) return string.format('%d', x) end

-- The wait before attempt `failures` + 1: `first` doubled per failure,
-- capped, its upper half jittered (`jitter` in [0, 1), from the client).
local function backoff(failures, first, cap, jitter)
  local d = first * 2 ^ (failures - 1)
  if d > cap then d = cap end
  return math.floor(d / 2 + d / 2 * jitter)
end

-- A script that serves many requests (batch.lua) sets `batching`: then
-- new schedule entries and in-flight removals wait in pending_* for one
-- ZADD and one ZREM (flush(), before anything reads those sets), and the
-- consumers' wake-up is published once at its end (publish_wake()).
-- first_before is the schedule's first {member, due} before the script's
-- first scheduling ({}: none; nil: nothing scheduled yet), earliest_added
-- the earliest due it scheduled, and took says a take ran.
local batching, first_before, earliest_added, took = false, nil, nil, false
local pending_scheduled, pending_removed = {}, {}

-- Adds `member` at `due` (an integer string) to the schedule; wakes waiting
-- consumers when it is now the first due (batching: see above).
local function add_scheduled(member, due)
  if batching then
    if first_before == nil then first_before = redis.call('ZRANGE', scheduled, 0, 0, 'WITHSCORES') end
    local d = tonumber(due)
    if earliest_added == nil or d < earliest_added then earliest_added = d end
    pending_scheduled[#pending_scheduled + 1] = due
    pending_scheduled[#pending_scheduled + 1] = member
    return
  end
  redis.call('ZADD', scheduled, due, member)
  if redis.call('ZRANGE', scheduled, 0, 0)[1] == member then redis.call('PUBLISH', wake, due) end
end

-- redis.call(command, key, list...) in steps of at most 1,000 of the
-- list's elements (an even number: ZADD's pairs stay whole): Lua's unpack
-- refuses a few thousand values, and a take may move many more.
local function call_with_list(command, key, list)
  for first = 1, #list, 1000 do
    redis.call(command, key, unpack(list, first, math.min(first + 999, #list)))
  end
end

local function flush()
  if #pending_scheduled > 0 then
    call_with_list('ZADD', scheduled, pending_scheduled)
    pending_scheduled = {}
  end
  if #pending_removed > 0 then
    call_with_list('ZREM', active, pending_removed)
    pending_removed = {}
  end
end

-- Puts a message back on the schedule.
local function schedule(key, member, due)
  due = int(due)
  redis.call('HSET', key, 's', 'z', 'due', due, 't', '')
  add_scheduled(member, due)
end

-- Wakes waiting consumers if the first scheduled message changed since
-- this script first scheduled one (a batching script's last step, after
-- flush()). Consumers wait for the first due time they were told; without
-- takes in the script only what it scheduled can come before that, so the
-- schedule need not be read again.
local function publish_wake()
  if first_before == nil then return end
  if not took then
    if first_before[2] == nil or earliest_added < tonumber(first_before[2]) then
      redis.call('PUBLISH', wake, int(earliest_added))
    end
    return
  end
  local first = redis.call('ZRANGE', scheduled, 0, 0, 'WITHSCORES')
  if first[1] and first[1] ~= first_before[1] then redis.call('PUBLISH', wake, first[2]) end
end

-- Adds a message unless one with its id is queued (in any state); `seq`
-- (from the counter) orders messages of one due time by offer. Returns 1
-- (added) or 0 (already queued). A message hash holds b (payload), m (its
-- schedule member), r/bo/bc (retries, backoff, cap), s (state), due, and
-- once set t (fencing token), f (failures), n (deliveries), e (last
-- error): fields written when they first matter, absent reads as 0 or ''.
local function offer(id, payload, delay, retries, first_backoff, cap, now, seq)
  local key = message_key(id)
  local state = redis.call('HGET', key, 's')  -- (a key of another type: WRONGTYPE, not "queued")
  if state == 'c' then
    redis.call('DEL', key)  -- a cancel's marker (edit.lua): the id is free
  elseif state then
    return 0
  end
  local member = string.format('%016x', seq) .. id
  local due_text = int(now + tonumber(delay))
  redis.call('HSET', key, 'b', payload, 'm', member, 'r', retries, 'bo', first_backoff, 'bc', cap, 's', 'z',
             'due', due_text)
  add_scheduled(member, due_text)
  return 1
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
-- Returns the ids it dead-lettered (their retries were spent).
local function reclaim(now, jitter)
  local expired = redis.call('ZRANGEBYSCORE', active, '-inf', now, 'LIMIT', 0, 100)
  local dead_now = {}
  for _, id in ipairs(expired) do
    redis.call('ZREM', active, id)
    local outcome = fail_attempt(id, now,
      'its delivery lease ran out before it was settled (the worker died, was stopped or hung)', jitter)
    if outcome == 2 then dead_now[#dead_now + 1] = id end
  end
  return dead_now
end

-- Delivers the first due messages (same due time: offer order), one per
-- lease in `leases` (ms, in request order), after reclaim(). Returns one
-- reply per lease: {1, now, id, payload, fencing token, due, deliveries,
-- failures, retries, last error}, or {0, now, next} once nothing is due
-- (batch.lua appends reclaim()'s dead-lettered ids to the first, if any):
-- next is when to look again (the first due time or lease deadline; -1:
-- nothing queued). The schedule is read, trimmed and the in-flight set
-- written once for all of them.
local function take_due(now, leases)
  local replies = {}
  while #replies < #leases do
    local firsts = redis.call('ZRANGEBYSCORE', scheduled, '-inf', now, 'LIMIT', 0, #leases - #replies)
    if #firsts == 0 then break end
    call_with_list('ZREM', scheduled, firsts)
    local found = {}
    for _, member in ipairs(firsts) do
      local id = string.sub(member, 17)
      local key = message_key(id)
      local v = redis.pcall('HMGET', key, 'b', 'due', 'f', 'r', 'e', 'n')
      -- (a schedule entry without its message, or with a key that is not
      -- one: dropped, never delivered empty; the others still go)
      if v[1] and not v.err then found[#found + 1] = {id, key, v} end
    end
    if #found > 0 then
      local last = redis.call('INCRBY', counter, #found)
      local in_flight = {}
      for i, f in ipairs(found) do
        local id, key, v = f[1], f[2], f[3]
        local token = last - #found + i
        local deliveries = (tonumber(v[6]) or 0) + 1
        redis.call('HSET', key, 's', 'a', 't', int(token), 'n', deliveries)
        in_flight[#in_flight + 1] = int(now + leases[#replies + 1])
        in_flight[#in_flight + 1] = id
        replies[#replies + 1] = {1, now, id, v[1], token, tonumber(v[2]), deliveries, tonumber(v[3]) or 0, tonumber(v[4]),
                                 v[5] or ''}
      end
      call_with_list('ZADD', active, in_flight)
    end
  end
  if #replies < #leases then
    local next = -1
    local z = redis.call('ZRANGE', scheduled, 0, 0, 'WITHSCORES')[2]
    if z then next = tonumber(z) end
    local a = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')[2]
    if a and (next < 0 or tonumber(a) < next) then next = tonumber(a) end
    while #replies < #leases do replies[#replies + 1] = {0, now, next} end
  end
  return replies
end

-- Settles the in-flight message `id` for the holder of `token`: action 'ack'
-- (done: removed), 'retry' (again after `value` ms, not a failure), 'fail'
-- (a failed attempt, `value` the reason), 'dead' (dead-lettered now, `value`
-- the reason). Returns 1 settled, 2 dead-lettered, 0 taken back (its lease
-- ran out and it was reclaimed, maybe redelivered), -1 cancelled while in
-- flight, -2 absent (acknowledged already, or purged). A message that stays
-- (retry, fail, dead) keeps in 'u' "<token>:<answer>" of the settle that
-- moved it, so the same settle sent again (its answer was lost) answers as
-- its first send did; an ack sent again finds its message absent, and a
-- cancel leaves a marker until the lease's end so that the two differ. Only
-- batch.lua settles: the in-flight entry goes at its flush().
local function settle(id, token, action, value, now, jitter)
  local key = message_key(id)
  local v = redis.call('HMGET', key, 's', 't', 'm', 'u')
  if not v[1] then return -2 end
  if v[1] == 'c' then return -1 end
  if v[1] ~= 'a' or v[2] ~= token then
    if v[4] == token .. ':1' then return 1 end
    if v[4] == token .. ':2' then return 2 end
    return 0
  end
  pending_removed[#pending_removed + 1] = id
  if action == 'ack' then
    redis.call('DEL', key)
    return 1
  end
  local answer = 2
  if action == 'retry' then
    schedule(key, v[3], now + tonumber(value))
    answer = 1
  elseif action == 'fail' then
    answer = fail_attempt(id, now, value, jitter)
  else
    redis.call('HSET', key, 's', 'd', 't', '', 'e', value)
    redis.call('ZADD', dead, now, id)
  end
  redis.call('HSET', key, 'u', token .. ':' .. answer)
  return answer
end
