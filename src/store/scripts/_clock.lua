-- The server's clock in ms: every deadline a script keeps is on it, so the
-- clocks of clients never meet.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
