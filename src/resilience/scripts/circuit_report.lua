-- shared_circuit_report() of src/resilience/circuit_store.h: a process's
-- outcomes since its last report, counted while it saw generation ARGV[10]:
-- ARGV = {policy..., channel, name (_circuit.lua), generation, calls,
-- failures, slows}.
--@publishes_broadcast
--@include _clock.lua
--@include _circuit.lua
local now = now_ms()
local r = load(now)
local changed = advance(r, now)
local gen, calls, failures, slows = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
if r.st == CLOSED and gen == r.gen and calls > 0 then
  local bucket = math.floor(now / bucket_ms())
  local b = r.buckets[bucket] or {0, 0, 0}
  r.buckets[bucket] = {b[1] + calls, b[2] + failures, b[3] + slows}
  local tc, tf, ts = 0, 0, 0
  for k, o in pairs(r.buckets) do
    if k <= bucket - 10 then
      r.buckets[k] = nil
    else
      tc, tf, ts = tc + o[1], tf + o[2], ts + o[3]
    end
  end
  if (failures > 0 or slows > 0) and over_threshold(tc, tf, ts, P.min_calls) then
    enter(r, OPEN, now)
    changed = true
  end
end
return answer(r, now, changed, false)
