-- Deletes up to 500 dead messages. ARGV = {base, wake}. Returns how many
-- (the caller repeats while it gets 500).
--@include _clock.lua
--@include _queue.lua
local ids = redis.call('ZRANGE', dead, 0, 499)
for _, id in ipairs(ids) do redis.call('DEL', message_key(id)) end
if #ids > 0 then redis.call('ZREM', dead, unpack(ids)) end
return #ids
