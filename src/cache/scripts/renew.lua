-- A loader still at work keeps its fill lease or refresh claim (core's lease
-- renewer calls this every third of fill_lease). KEYS = {fill lease, refresh
-- claim}; ARGV = {token, lease ms}. Extends those `token` holds (a waiter's
-- '+' mark kept); returns 1 when it held one, 0 when neither is its any more.
local renewed = 0
for i = 1, #KEYS do
  local held = redis.call('GET', KEYS[i])
  if held == ARGV[1] or held == ARGV[1] .. '+' then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    renewed = 1
  end
end
return renewed
