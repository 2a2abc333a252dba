-- The requests of one queue's clients, several in one script: a client
-- sends the requests that came while its previous scripts were in flight
-- together (RequestBatch, queue_redis.cpp). ARGV = {base, wake, count, then
-- per request: kind, argument count, arguments...}:
--   offer       {id, payload, delay ms, retries, backoff ms, backoff cap ms}
--               -> 1 added | 0 already queued
--   take        {lease ms, jitter, n} -> take_due()'s replies: the
--               delivered messages, then one "nothing due" if fewer than n
--   settle      {id, token, action, value, jitter} -> settle()'s answer
--   order       {n, ttl ms}, first if at all, with KEYS[5] its producer's
--               key: runs the script only if it is the producer's first
--               send (n = 1, no key) or the key holds n - 1; then stores n
--               there for ttl -> 1. Else the script does nothing and
--               returns {0} (queue_redis.cpp's RequestBatch sends it again
--               later), or {-1} when the key holds n or more (this send ran
--               already: a resend after a lost answer).
-- One reply per request, in order, all at one `now`. Offers and settles run
-- in request order; then the takes get the next due messages (requests in
-- order). Their schedule and in-flight commands are shared, as are the
-- offers' and settles' (flush()), and the consumers' wake-up is published
-- once. A request that fails answers with its error; the others are
-- unaffected.
--@include _queue.lua
if ARGV[4] == 'order' then
  local n, last = tonumber(ARGV[6]), redis.call('GET', KEYS[5])
  if last and tonumber(last) >= n then return {-1} end
  if not ((not last and n == 1) or tonumber(last) == n - 1) then return {0} end
  redis.call('SET', KEYS[5], ARGV[6], 'PX', ARGV[7])
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
if seq > 0 then seq = redis.call('INCRBY', counter, seq) - seq end

local takes = {}  -- {request, lease, jitter}: one per message a take asks for
-- One request at ARGV[a...]; a take is answered below (its list filled there).
local function serve(r, kind, a)
  if kind == 'offer' then
    seq = seq + 1
    return offer(ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], now, seq)
  elseif kind == 'settle' then
    return settle(ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], now, tonumber(ARGV[a + 4]))
  elseif kind == 'order' then
    return 1  -- (checked above)
  elseif kind == 'take' then
    local lease, jitter = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    for _ = 1, tonumber(ARGV[a + 2]) do takes[#takes + 1] = {r, lease, jitter} end
    return {}
  end
  error('unknown request kind')
end

local replies = {}
at = 4
for r = 1, count do
  local kind = ARGV[at]
  local ok, reply = pcall(serve, r, kind, at + 2)
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
  for i, t in ipairs(takes) do
    local list, reply = replies[t[1]], ok and got[i] or error_reply(got, 'take')
    local last = list[#list]
    -- (one "nothing due" per request is enough: the rest say the same)
    if not (last and last[1] == 0 and reply[1] == 0) then list[#list + 1] = reply end
  end
end
flush()  -- (what a failed take step left pending)
publish_wake()
return replies
