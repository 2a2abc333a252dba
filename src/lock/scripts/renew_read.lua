-- read renewal. KEYS = {R1, R1:fence, C1, R2, R2:fence, C2, ...} (L:readers,
-- L:readers:fence, L:fence of each reader's lock); ARGV = {grace ms, owner1,
-- lease1 ms, ...}. Extends each reader whose lease is still live (and its
-- counter, by the grace more); never re-adds one. Returns 1 / 0 per reader.
--@include _counter.lua
--@include _clock.lua
--@include _types.lua
local now = now_ms()
local grace = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 3 do
  local r, owner, lease = KEYS[3 * i - 2], ARGV[2 * i], tonumber(ARGV[2 * i + 1])
  local until_ms = redis.call('ZSCORE', r, owner)
  if until_ms and tonumber(until_ms) > now then
    redis.call('ZADD', r, now + lease, owner)
    live_for(r, lease)
    live_for(KEYS[3 * i - 1], lease)
    live_for(KEYS[3 * i], lease + grace)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
