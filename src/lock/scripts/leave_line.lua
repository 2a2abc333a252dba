-- Leaves a place in line (fair or write). KEYS = {place zset, L[, L:line]};
-- ARGV = {owner, channel}. Wakes waiters when it left and L is free (the next
-- in line, or readers held back by a waiting writer, may go). Returns 1 / 0.
local left = redis.call('ZREM', KEYS[1], ARGV[1])
if KEYS[3] then redis.call('LREM', KEYS[3], 0, ARGV[1]) end
if left == 1 and redis.call('EXISTS', KEYS[2]) == 0 then redis.call('PUBLISH', ARGV[2], '1') end
return left
