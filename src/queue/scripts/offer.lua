-- Adds a message unless one with its id is queued (in any state).
-- KEYS[5] = the message; ARGV = {base, wake, id, payload, delay ms, retries,
-- backoff ms, backoff cap ms}. Returns {1 added | 0 already queued, due, now}.
--@include _queue.lua
local now = now_ms()
local key = KEYS[5]
local existing = redis.call('HGET', key, 'due')
if existing then return {0, tonumber(existing), now} end
local member = string.format('%016x', redis.call('INCR', counter)) .. ARGV[3]  -- same due: offer order
local due = now + tonumber(ARGV[5])
redis.call('HSET', key, 'b', ARGV[4], 'm', member, 'r', ARGV[6], 'bo', ARGV[7], 'bc', ARGV[8], 'f', 0, 'n', 0, 'e', '')
schedule(key, member, due)
return {1, due, now}
