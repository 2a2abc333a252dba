-- The shared circuit breaker's record and the moves every step makes first:
-- the exact mirror of src/resilience/circuit_store.h (and of the rules in
-- circuit_rules.h), on the server's clock. KEYS = {the record (a hash)};
-- ARGV starts with the policy: window ms, failure_rate, slow_call ms (0:
-- none), slow_call_rate, min_calls, open_for ms, half_open_calls, then the
-- channel changes are published on and the breaker's name. The record's
-- fields: st (0 closed, 1 open, 2 half-open), gen, ou (open until), hs
-- (half-open since), b<bucket> ("calls failures slows", the closed window),
-- p:<owner> (a probe out: its lease's end), pc pf ps (probes that ended).
-- Needs _clock.lua.
local function int(n) return string.format('%d', n) end
local P = {window = tonumber(ARGV[1]), failure_rate = tonumber(ARGV[2]), slow_call = tonumber(ARGV[3]),
           slow_call_rate = tonumber(ARGV[4]), min_calls = tonumber(ARGV[5]), open_for = tonumber(ARGV[6]),
           half_open_calls = tonumber(ARGV[7])}
local channel, name = ARGV[8], ARGV[9]
local CLOSED, OPEN, HALF_OPEN = 0, 1, 2

local function over_threshold(calls, failures, slows, min_calls)
  if calls == 0 or calls < min_calls then return false end
  if failures * 100 >= P.failure_rate * calls then return true end
  return P.slow_call > 0 and slows * 100 >= P.slow_call_rate * calls
end
local function probes_verdict(r)
  if over_threshold(P.half_open_calls, r.pf, r.ps, 1) then return OPEN end
  if r.pc >= P.half_open_calls then
    if over_threshold(r.pc, r.pf, r.ps, 1) then return OPEN end
    return CLOSED
  end
  return HALF_OPEN
end
local function bucket_ms() return math.max(1, math.floor(P.window / 10)) end

local function load(now)
  local r = {st = CLOSED, gen = math.max(1, now), ou = 0, hs = 0, buckets = {}, probes = {}, nprobes = 0,
             pc = 0, pf = 0, ps = 0}
  local flat = redis.call('HGETALL', KEYS[1])
  for i = 1, #flat, 2 do
    local f, v = flat[i], flat[i + 1]
    if f == 'st' or f == 'gen' or f == 'ou' or f == 'hs' or f == 'pc' or f == 'pf' or f == 'ps' then
      r[f] = tonumber(v)
    elseif string.sub(f, 1, 1) == 'b' then
      local c, fl, s = string.match(v, '^(%d+) (%d+) (%d+)$')
      r.buckets[tonumber(string.sub(f, 2))] = {tonumber(c), tonumber(fl), tonumber(s)}
    elseif string.sub(f, 1, 2) == 'p:' then
      r.probes[string.sub(f, 3)] = tonumber(v)
      r.nprobes = r.nprobes + 1
    end
  end
  return r
end
local function save(r)
  local flat = {'st', r.st, 'gen', int(r.gen), 'ou', int(r.ou), 'hs', int(r.hs), 'pc', r.pc, 'pf', r.pf, 'ps', r.ps}
  for b, o in pairs(r.buckets) do
    flat[#flat + 1] = 'b' .. int(b)
    flat[#flat + 1] = int(o[1]) .. ' ' .. int(o[2]) .. ' ' .. int(o[3])
  end
  for owner, expiry in pairs(r.probes) do
    flat[#flat + 1] = 'p:' .. owner
    flat[#flat + 1] = int(expiry)
  end
  redis.call('DEL', KEYS[1])
  for from = 1, #flat, 2000 do  -- (unpack() takes a few thousand values at most)
    redis.call('HSET', KEYS[1], unpack(flat, from, math.min(#flat, from + 1999)))
  end
  redis.call('PEXPIRE', KEYS[1], 2 * (P.window + P.open_for) + 60000)
end

local function enter(r, to, now)
  r.st = to
  r.gen = r.gen + 1
  r.buckets = {}
  r.probes = {}
  r.nprobes = 0
  r.pc, r.pf, r.ps = 0, 0, 0
  if to == OPEN then r.ou = now + P.open_for end
  if to == HALF_OPEN then r.hs = now end
end
-- Moved on to now; true when the state changed.
local function advance(r, now)
  if r.st == OPEN and now >= r.ou then
    enter(r, HALF_OPEN, now)
    return true
  end
  if r.st ~= HALF_OPEN then return false end
  for owner, expiry in pairs(r.probes) do
    if expiry <= now then
      r.probes[owner] = nil
      r.nprobes = r.nprobes - 1
    end
  end
  if r.nprobes + r.pc >= P.half_open_calls and r.nprobes > 0 and now - r.hs >= P.open_for then
    enter(r, OPEN, now)
    return true
  end
  return false
end
-- {state, generation, retry_after ms, granted, changed}; a change is
-- published first.
local function answer(r, now, changed, granted)
  local retry_after = 0
  if r.st == OPEN then retry_after = math.max(0, r.ou - now) end
  save(r)
  if changed then
    redis.call('PUBLISH', channel, r.st .. ' ' .. int(r.gen) .. ' ' .. int(retry_after) .. ' ' .. name)
  end
  return {r.st, r.gen, retry_after, granted and 1 or 0, changed and 1 or 0}
end
