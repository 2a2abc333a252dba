-- Exclusive renewal. KEYS = {L1, L1:fence, L2, L2:fence, ...};
-- ARGV = {grace ms, owner1, lease1 ms, owner2, lease2 ms, ...}.
-- Compare-and-pexpire for each lease (its counter outlives it by the grace);
-- never recreates a key. Returns 1 (owned, extended) / 0 (lost) per lease.
--@include _counter.lua
local grace = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 2 do
  if redis.call('GET', KEYS[2 * i - 1]) == ARGV[2 * i] then
    local ms = tonumber(ARGV[2 * i + 1])
    redis.call('PEXPIRE', KEYS[2 * i - 1], ms)
    live_for(KEYS[2 * i], ms + grace)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
