-- shared_circuit_probe() of src/resilience/circuit_store.h: a fleet-wide
-- probe place for ARGV[10] (an owner) until now + ARGV[11] ms: ARGV =
-- {policy..., channel, name (_circuit.lua), owner, lease ms}.
--@publishes_broadcast
--@include _clock.lua
--@include _circuit.lua
local now = now_ms()
local r = load(now)
local changed = advance(r, now)
local owner, lease = ARGV[10], tonumber(ARGV[11])
local granted = false
if r.st == CLOSED then
  granted = true
elseif r.st == HALF_OPEN then
  if r.probes[owner] then
    r.probes[owner] = now + lease
    granted = true
  elseif r.nprobes + r.pc < P.half_open_calls then
    r.probes[owner] = now + lease
    r.nprobes = r.nprobes + 1
    granted = true
  end
end
return answer(r, now, changed, granted)
