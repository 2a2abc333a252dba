-- A worker's usual step in one round trip: settles its delivery, then takes
-- the next message. KEYS[5] = the settled message; ARGV = {base, wake, id,
-- token, action, value, jitter, lease ms}. Returns {settle()'s answer,
-- take_first's reply}.
--@include _queue.lua
local now = now_ms()
local settled = settle(ARGV[3], ARGV[4], ARGV[5], ARGV[6], now, tonumber(ARGV[7]))
reclaim(now, tonumber(ARGV[7]))
return {settled, take_first(now, tonumber(ARGV[8]))}
