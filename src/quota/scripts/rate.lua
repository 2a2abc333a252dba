-- One rate-limit decision: gcra_step() of src/quota/rate_store.h, its exact
-- mirror, on the server's clock. KEYS = {the key's state}; ARGV = {interval
-- between permits (us), burst, permits asked for, max wait (us)}. The state
-- is the key's theoretical arrival time (us, an integer), kept until it has
-- passed. Returns {1 admitted / 0 refused, wait (us), remaining}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2]) * interval
local from = tonumber(redis.call('GET', KEYS[1]) or now) or now
if from < now then from = now end
local new_tat = from + tonumber(ARGV[3]) * interval
local turn_in = new_tat - capacity - now
if turn_in > tonumber(ARGV[4]) then
  return {0, turn_in, math.max(0, math.floor((capacity - (from - now)) / interval))}
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.floor((new_tat - now) / 1000) + 1)
return {1, math.max(0, turn_in), math.max(0, math.floor((capacity - (new_tat - now)) / interval))}
