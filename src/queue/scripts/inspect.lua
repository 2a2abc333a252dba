-- One message's state. KEYS[5] = the message; ARGV = {base, wake}. Returns
-- {} when absent, else {state, due, deliveries, failures, last error, now}
-- with state 'z' (scheduled), 'a' (in flight) or 'd' (dead). A cancel's
-- marker (state 'c', edit.lua) is no message.
--@include _clock.lua
--@include _queue.lua
local v = redis.call('HMGET', KEYS[5], 's', 'due', 'n', 'f', 'e')
if not v[1] or v[1] == 'c' then return {} end
return {v[1], tonumber(v[2]), tonumber(v[3]) or 0, tonumber(v[4]) or 0, v[5] or '', now_ms()}
