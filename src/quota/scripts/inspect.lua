-- How far ahead of the server's clock a key's quota is spent (its
-- theoretical arrival time - now, us), or -1 when the key holds nothing.
-- KEYS = {the key's state}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '')
if not tat then return -1 end
return tat - now
