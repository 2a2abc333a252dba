-- Helpers of the lock types: server time in ms, and dropping readers and
-- waiting writers whose time ran out.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function prune_readers(readers, reader_fences, now)
  local gone = redis.call('ZRANGEBYSCORE', readers, '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
    redis.call('HDEL', reader_fences, unpack(gone))
  end
end
local function prune_rw(readers, reader_fences, writers, now)
  prune_readers(readers, reader_fences, now)
  redis.call('ZREMRANGEBYSCORE', writers, '-inf', now)
end
-- The live readers as {owner, ms left, token, ...} (operators' views).
local function live_readers(readers, reader_fences, now)
  local out = {}
  local live = redis.call('ZRANGEBYSCORE', readers, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #live, 2 do
    out[#out + 1] = live[i]
    out[#out + 1] = tostring(tonumber(live[i + 1]) - now)
    out[#out + 1] = redis.call('HGET', reader_fences, live[i]) or '0'
  end
  return out
end
