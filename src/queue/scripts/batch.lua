-- The requests of one queue's clients, several in one script: a client
-- sends the requests that came while its previous scripts were in flight
-- together (store::RequestBatch, src/store/request_batch.h, whose protocol
-- this script follows). ARGV = {base, wake, count, then per request: kind,
-- argument count, arguments...}:
--   offer       {id, payload, delay ms, retries, backoff ms, backoff cap ms
--               [, schedule, tick ms[, missed, run record[, if last]]]} ->
--               1 added | 0 already queued; with a schedule, a tick due at
--               `tick` (server clock), added only if the schedule offered
--               no tick at or after it, and, with `if last`, only if its
--               last tick offered is that one (-1 none), and not while
--               the schedule is paused, nor for a tick before 0, nor
--               with an id queued already (else 0, the schedule as it was);
--               `missed` is added to the schedule's count with the tick
--               (only then: counted once whoever offers it), the run
--               record ("" none) kept either way
--   take        {lease ms, jitter, n, request id} -> take_due()'s replies:
--               the delivered messages, then one "nothing due" if fewer
--               than n. The ids and tokens it delivered are kept for the
--               lease under {base}:tk:<request id>: the same request sent
--               again (its reply lost) gets those of them still in flight
--               under their tokens, leased again, instead of new ones
--   settle      {id, token, action, value, jitter} -> settle()'s answer
--   order       {n, ttl ms}, first if at all, with KEYS[5] its producer's
--               key: runs the script only if it is the producer's first
--               send (n = 1, no key) or the key holds n - 1; then stores n
--               there for ttl -> 1. Else the script does nothing and
--               returns {0} (the RequestBatch sends it again later),
--               or {-1} when the key holds n or more (this send ran
--               already: a resend after a lost answer).
-- One reply per request, in order, all at one `now`. Offers and settles run
-- in request order; then the takes get the next due messages (requests in
-- order). Their schedule and in-flight commands are shared, as are the
-- offers' and settles' (flush()), and the consumers' wake-up is published
-- once. A request that fails answers with its error; the others are
-- unaffected.
-- At the server's maxmemory (noeviction) only the offers are refused, each
-- answering Redis's OOM error: the settles and takes go on, so the queue
-- drains and what was processed is acknowledged. (Redis refuses a script's
-- first write that may grow memory and then lets every later write go: the
-- script's first writes are the probes below, the order key and the offers'
-- counter, and a write that changes nothing lets the rest go.)
--@include _clock.lua
--@include _queue.lua
local oom, wrote = false, false
local function probe(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    if string.sub(r.err, 1, 4) ~= 'OOM ' then error(r) end
    oom = true
    return nil
  end
  wrote = true
  return r
end
if ARGV[4] == 'order' then
  local n, last = tonumber(ARGV[6]), redis.call('GET', KEYS[5])
  if last and tonumber(last) >= n then return {-1} end
  if not ((not last and n == 1) or tonumber(last) == n - 1) then return {0} end
  -- (at OOM not stored: the producer's next send is refused once and moves
  -- to a new producer, as after a send that never ran)
  probe('SET', KEYS[5], ARGV[6], 'PX', ARGV[7])
end
local now = now_ms()
batching = true
local count = tonumber(ARGV[3])

-- A failed request's reply: a command's error as it came, else the script's.
local function error_reply(e, kind)
  if type(e) == 'table' and e.err then return e end
  if type(e) == 'string' and string.match(e, '^%u+ ') then return {err = e} end  -- its text ("WRONGTYPE ...")
  return {err = 'ERR queue request ' .. tostring(kind) .. ': ' .. tostring(e)}
end

-- The offers' sequence numbers: one INCRBY for all of them.
local seq, at = 0, 4
for _ = 1, count do
  if ARGV[at] == 'offer' then seq = seq + 1 end
  at = at + 2 + tonumber(ARGV[at + 1])
end
if seq > 0 and not oom then
  local last = probe('INCRBY', counter, seq)
  if last then seq = last - seq end
end
if not wrote then redis.call('ZREM', active, '') end  -- (no member is '': changes nothing)

local takes = {}  -- {request, lease, jitter, request id}: one per message a take asks for

-- A take sent again: what its first send delivered and is still in flight
-- under the same token, leased again from now; nil when nothing is.
local function take_again(rid, lease)
  local text = redis.call('GET', base .. ':tk:' .. rid)
  if not text then return nil end
  local kept = {}  -- id, token, ... (an id holds no control byte: queue.cpp)
  for p in (text .. '\n'):gmatch('(.-)\n') do kept[#kept + 1] = p end
  local list, in_flight = {}, {}
  for i = 1, #kept, 2 do
    local id, token = kept[i], kept[i + 1]
    local v = redis.pcall('HMGET', message_key(id), 's', 't', 'b', 'due', 'f', 'r', 'e', 'n')
    if not v.err and v[1] == 'a' and v[2] == token then
      in_flight[#in_flight + 1] = int(now + lease)
      in_flight[#in_flight + 1] = id
      list[#list + 1] = {1, now, id, v[3], tonumber(token), tonumber(v[4]), tonumber(v[8]) or 0, tonumber(v[5]) or 0,
                         tonumber(v[6]), v[7] or ''}
    end
  end
  if #list == 0 then return nil end
  call_with_list('ZADD', active, in_flight)
  return list
end

-- One request at ARGV[a...]; a take is answered below (its list filled there).
local function serve(r, kind, a, n)
  if kind == 'offer' then
    if oom then error({err = "OOM command not allowed when used memory > 'maxmemory'."}) end
    seq = seq + 1
    local delay = ARGV[a + 2]
    if n >= 8 then  -- a schedule's tick
      local schedule, tick = ARGV[a + 6], tonumber(ARGV[a + 7])
      if n >= 10 and ARGV[a + 9] ~= '' then redis.call('HSET', runs_key(), schedule, ARGV[a + 9]) end
      if tick < 0 or redis.call('HGET', paused_key(), schedule) then return 0 end
      local held = redis.call('HGET', message_key(ARGV[a]), 's')
      if held and held ~= 'c' then return 0 end  -- its id queued already: the schedule left as it was
      local last = redis.call('HGET', ticks_key(), schedule)
      if last and tonumber(last) >= tick then return 0 end
      if n >= 11 and (last and tonumber(last) or -1) ~= tonumber(ARGV[a + 10]) then return 0 end
      redis.call('HSET', ticks_key(), schedule, ARGV[a + 7])
      if n >= 10 and ARGV[a + 8] ~= '0' then redis.call('HINCRBY', missed_key(), schedule, ARGV[a + 8]) end
      delay = tick > now and tick - now or 0
    end
    return offer(ARGV[a], ARGV[a + 1], delay, ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], now, seq)
  elseif kind == 'settle' then
    return settle(ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], now, tonumber(ARGV[a + 4]))
  elseif kind == 'order' then
    return 1  -- (checked above)
  elseif kind == 'take' then
    local lease, jitter = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    local rid = n >= 4 and ARGV[a + 3] or nil  -- (an older client sends none)
    if rid then
      local again = take_again(rid, lease)
      if again then return again end
    end
    for _ = 1, tonumber(ARGV[a + 2]) do takes[#takes + 1] = {r, lease, jitter, rid} end
    return {}
  end
  error('unknown request kind')
end

local replies = {}
at = 4
for r = 1, count do
  local kind = ARGV[at]
  local ok, reply = pcall(serve, r, kind, at + 2, tonumber(ARGV[at + 1]))
  if ok then replies[r] = reply else replies[r] = error_reply(reply, kind) end
  at = at + 2 + tonumber(ARGV[at + 1])
end

flush()  -- the takes read the schedule and the in-flight set
if #takes > 0 then
  took = true
  local ok, got = pcall(function()
    local dead_now = reclaim(now, takes[1][3])
    flush()  -- (what it scheduled again with no backoff is due now)
    local leases = {}
    for i, t in ipairs(takes) do leases[i] = t[2] end
    local taken = take_due(now, leases)
    if #dead_now > 0 then taken[1][#taken[1] + 1] = dead_now end
    return taken
  end)
  local kept = {}  -- request id -> {id, token, ...} of what it delivered
  for i, t in ipairs(takes) do
    local list, reply = replies[t[1]], ok and got[i] or error_reply(got, 'take')
    local last = list[#list]
    -- (one "nothing due" per request is enough: the rest say the same)
    if not (last and last[1] == 0 and reply[1] == 0) then list[#list + 1] = reply end
    if t[4] and ok and reply[1] == 1 then
      kept[t[4]] = kept[t[4]] or {lease = t[2]}
      local k = kept[t[4]]
      k[#k + 1] = reply[3]
      k[#k + 1] = int(reply[5])
    end
  end
  for rid, k in pairs(kept) do
    redis.call('SET', base .. ':tk:' .. rid, table.concat(k, '\n'), 'PX', int(k.lease))
  end
end
flush()  -- (what a failed take step left pending)
publish_wake()
return replies
