// The Lua scripts of the redis lock backend, all in one place (see docs/redis.md).
// Keys and values reach them only through KEYS / ARGV; they are loaded once per
// connection by SHA (EVALSHA, falling back to EVAL on NOSCRIPT).
#pragma once

namespace weave::redis {

// KEYS[1] lock key, KEYS[2] fencing counter (same hash slot: both start with
// the "{...}" tag of the lock key). ARGV[1] owner token, ARGV[2] lease in ms.
// Returns {1, fencing token} when acquired (or refreshed by the same owner),
// {0, holder's pttl in ms (or -1 unknown)} when held by another owner.
// A counter that does not exist yet (first use, or lost with the Redis data)
// starts at the server's TIME in microseconds, so tokens keep increasing even
// across a restart without persistence.
inline constexpr const char* kAcquireScript = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder == false then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', KEYS[2], t[1] .. string.format('%06d', tonumber(t[2])))
  end
  local fence = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, fence}
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, tonumber(redis.call('GET', KEYS[2]) or '0')}
end
return {0, redis.call('PTTL', KEYS[1])}
)lua";

// KEYS[1] lock key. ARGV[1] owner token, ARGV[2] release channel.
// Compare-and-delete; wakes waiters with one PUBLISH. Returns 1 released, 0 lost.
inline constexpr const char* kReleaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], '1')
  return 1
end
return 0
)lua";

// KEYS[i] lock keys; ARGV[2i-1] owner token, ARGV[2i] lease in ms.
// Compare-and-pexpire for each; never recreates a key. Returns a list of
// 1 (owned, extended) / 0 (lost), one per key.
inline constexpr const char* kRenewScript = R"lua(
local out = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)lua";

}  // namespace weave::redis
