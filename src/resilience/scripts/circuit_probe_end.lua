-- shared_circuit_probe_end() of src/resilience/circuit_store.h: how the
-- probe of ARGV[11] (an owner) let through in generation ARGV[10] ended:
-- ARGV = {policy..., channel, name (_circuit.lua), generation, owner,
-- outcome (0 nothing, 1 succeeded, 2 failed), slow (0/1)}.
--@publishes_broadcast
--@include _clock.lua
--@include _circuit.lua
local now = now_ms()
local r = load(now)
local changed = advance(r, now)
local gen, owner, outcome, slow = tonumber(ARGV[10]), ARGV[11], tonumber(ARGV[12]), ARGV[13] == '1'
if r.st == HALF_OPEN and gen == r.gen and r.probes[owner] then
  r.probes[owner] = nil
  r.nprobes = r.nprobes - 1
  if outcome ~= 0 then
    r.pc = r.pc + 1
    if outcome == 2 then r.pf = r.pf + 1 end
    if slow then r.ps = r.ps + 1 end
    local next = probes_verdict(r)
    if next ~= HALF_OPEN then
      enter(r, next, now)
      changed = true
    end
  end
end
return answer(r, now, changed, false)
