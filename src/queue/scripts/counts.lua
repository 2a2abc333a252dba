-- Exact counts per state, after taking back expired deliveries (so a dead
-- worker's message counts where it now is). ARGV = {base, wake, jitter}.
-- Returns {delayed, ready, in flight, dead, now, ids the reclaim dead-lettered}.
--@include _clock.lua
--@include _queue.lua
local now = now_ms()
local dead_now = reclaim(now, tonumber(ARGV[3]))
local ready = redis.call('ZCOUNT', scheduled, '-inf', now)
return {redis.call('ZCARD', scheduled) - ready, ready, redis.call('ZCARD', active), redis.call('ZCARD', dead), now,
        dead_now}
