-- Leases are sibling keys of an entry ("<entry>fill", "<entry>refresh")
-- holding the token of the caller that loads, with '+' appended once a
-- waiter asked to be woken. Drops those of KEYS[first..] that `token` holds;
-- returns 2 when one had a waiter (the caller then publishes a wake), else 0.
local function release_leases(first, token)
  local woke = 0
  for i = first, #KEYS do
    local held = redis.call('GET', KEYS[i])
    if held == token or held == token .. '+' then
      redis.call('DEL', KEYS[i])
      if held ~= token then woke = 2 end
    end
  end
  return woke
end
