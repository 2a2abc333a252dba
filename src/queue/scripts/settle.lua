-- Settles an in-flight delivery (see settle() in _queue.lua). KEYS[5] = the
-- message; ARGV = {base, wake, id, token, action, value, jitter}. Returns
-- settle()'s answer.
--@include _queue.lua
return settle(ARGV[3], ARGV[4], ARGV[5], ARGV[6], now_ms(), tonumber(ARGV[7]))
