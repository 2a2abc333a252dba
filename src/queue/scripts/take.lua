-- Takes back expired deliveries, then delivers the first due message under
-- a lease. ARGV = {base, wake, lease ms, jitter}. Returns take_first's reply.
--@include _queue.lua
local now = now_ms()
reclaim(now, tonumber(ARGV[4]))
return take_first(now, tonumber(ARGV[3]))
