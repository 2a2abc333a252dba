// The Lua scripts of the redis lock backend, all in one place (see docs/redis.md).
// Keys and values reach them only through KEYS / ARGV; they are loaded once per
// connection by SHA (EVALSHA, falling back to EVAL on NOSCRIPT).
#pragma once

#include <cstddef>

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

// ---- lock types (fair, read, write); see docs/redis.md "Lock types" ----
// For lock key L = "{P K}" every name below starts with L's hash tag, so one
// script's keys always share a cluster slot:
//   L             exclusive holder (reentrant, fair and write), PX lease
//   L:fence       fencing counter (all types)
//   L:line        fair: waiting owners in arrival order (list)
//   L:line:until  fair: owner -> expiry of its place in line, server ms (zset)
//   L:readers     read: owner -> lease expiry, server ms (zset)
//   L:readers:fence  read: owner -> its fencing token (hash)
//   L:writers     write: waiting writers, owner -> expiry of their place (zset)
// Expiries are the server's TIME, so clocks of clients never meet; every
// auxiliary key gets a PEXPIRE covering its longest member, so nothing lingers.

// Shared Lua helpers: server time in ms, the next fencing token of a counter
// (seeded from TIME like kAcquireScript), "make key k live at least ms", and
// dropping readers and waiting writers whose time ran out.
inline constexpr char kTypeHelpers[] = R"lua(
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function next_fence(k)
  if redis.call('EXISTS', k) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', k, t[1] .. string.format('%06d', tonumber(t[2])))
  end
  return redis.call('INCR', k)
end
local function live_for(k, ms)
  if redis.call('PTTL', k) < ms then redis.call('PEXPIRE', k, ms) end
end
-- The caller takes the exclusive key; its new token.
local function take(lock, counter, owner, ms)
  local fence = next_fence(counter)
  redis.call('SET', lock, owner, 'PX', ms)
  return {1, fence}
end
-- The caller holds it already (a resent acquire): extend, same token.
local function refresh(lock, counter, ms)
  redis.call('PEXPIRE', lock, ms)
  return {1, tonumber(redis.call('GET', counter) or '0')}
end
local function prune_rw(readers, reader_fences, writers, now)
  local gone = redis.call('ZRANGEBYSCORE', readers, '-inf', now)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
    redis.call('HDEL', reader_fences, unpack(gone))
  end
  redis.call('ZREMRANGEBYSCORE', writers, '-inf', now)
end
)lua";

// A script body = the helpers followed by its own text, joined at compile
// time (static storage: the executor identifies a script by its address).
template <std::size_t N1, std::size_t N2>
struct JoinedScript {
  char text[N1 + N2 - 1] = {};
  constexpr JoinedScript(const char (&a)[N1], const char (&b)[N2]) {
    for (std::size_t i = 0; i + 1 < N1; ++i) text[i] = a[i];
    for (std::size_t i = 0; i < N2; ++i) text[N1 - 1 + i] = b[i];
  }
};

// fair. KEYS = {L, L:fence, L:line, L:line:until}; ARGV = {owner, lease ms,
// place-in-line ms (0 = do not queue)}. Drops waiters whose place ran out;
// grants when L is free and the caller is first in line (or the line is
// empty); otherwise queues / refreshes the caller. Returns {1, token} or
// {0, ms until the holder's lease or the first waiter's place runs out}.
inline constexpr JoinedScript kAcquireFairScriptBody{kTypeHelpers, R"lua(
local now = now_ms()
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for _, o in ipairs(dead) do redis.call('LREM', KEYS[3], 0, o) end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now) end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ARGV[2]) end
local first = redis.call('LINDEX', KEYS[3], 0)
if holder == false and (first == false or first == ARGV[1]) then
  if first then
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], ARGV[1])
  end
  return take(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
end
local entry = tonumber(ARGV[3])
if entry > 0 then
  if redis.call('ZSCORE', KEYS[4], ARGV[1]) == false then redis.call('RPUSH', KEYS[3], ARGV[1]) end
  redis.call('ZADD', KEYS[4], now + entry, ARGV[1])
  live_for(KEYS[3], entry)
  live_for(KEYS[4], entry)
  first = redis.call('LINDEX', KEYS[3], 0)
end
if holder then return {0, redis.call('PTTL', KEYS[1])} end
local until_ms = tonumber(redis.call('ZSCORE', KEYS[4], first) or now + 1)
return {0, math.max(1, until_ms - now)}
)lua"};
inline constexpr const char* kAcquireFairScript = kAcquireFairScriptBody.text;

// read. KEYS = {L, L:fence, L:readers, L:readers:fence, L:writers};
// ARGV = {owner, lease ms}. Granted unless a writer holds L or a writer waits
// (writer preference). Returns {1, token} or {0, ms until that may change}.
inline constexpr JoinedScript kAcquireReadScriptBody{kTypeHelpers, R"lua(
local now = now_ms()
prune_rw(KEYS[3], KEYS[4], KEYS[5], now)
local lease = tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  redis.call('ZADD', KEYS[3], now + lease, ARGV[1])
  live_for(KEYS[3], lease)
  live_for(KEYS[4], lease)
  return {1, tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0')}
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('PTTL', KEYS[1])} end
local w = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
if #w > 0 then return {0, math.max(1, tonumber(w[2]) - now)} end
local fence = next_fence(KEYS[2])
redis.call('ZADD', KEYS[3], now + lease, ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], fence)
live_for(KEYS[3], lease)
live_for(KEYS[4], lease)
return {1, fence}
)lua"};
inline constexpr const char* kAcquireReadScript = kAcquireReadScriptBody.text;

// write. KEYS = {L, L:fence, L:readers, L:readers:fence, L:writers};
// ARGV = {owner, lease ms, place-in-line ms (0 = do not queue)}. Granted when
// L is free and no reader's lease is live; otherwise the caller waits in
// L:writers (which holds back new readers). Returns {1, token} or {0, ms}.
inline constexpr JoinedScript kAcquireWriteScriptBody{kTypeHelpers, R"lua(
local now = now_ms()
prune_rw(KEYS[3], KEYS[4], KEYS[5], now)
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ARGV[2]) end
if holder == false and redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[5], ARGV[1])
  return take(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
end
local entry = tonumber(ARGV[3])
if entry > 0 then
  redis.call('ZADD', KEYS[5], now + entry, ARGV[1])
  live_for(KEYS[5], entry)
end
if holder then return {0, redis.call('PTTL', KEYS[1])} end
local r = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
return {0, math.max(1, tonumber(r[2]) - now)}
)lua"};
inline constexpr const char* kAcquireWriteScript = kAcquireWriteScriptBody.text;

// read release. KEYS = {L:readers, L:readers:fence}; ARGV = {owner, channel}.
// Removes the reader; the last one out wakes waiters (a writer may go).
// Returns 1 released, 0 lost (not a reader any more, or its lease ran out).
inline constexpr JoinedScript kReleaseReadScriptBody{kTypeHelpers, R"lua(
local now = now_ms()
local until_ms = redis.call('ZSCORE', KEYS[1], ARGV[1])
if until_ms == false then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) == 0 then redis.call('PUBLISH', ARGV[2], '1') end
if tonumber(until_ms) <= now then return 0 end
return 1
)lua"};
inline constexpr const char* kReleaseReadScript = kReleaseReadScriptBody.text;

// Leaves a place in line (fair or write). KEYS = {place zset, L[, L:line]};
// ARGV = {owner, channel}. Wakes waiters when it left and L is free (the next
// in line, or readers held back by a waiting writer, may go). Returns 1 / 0.
inline constexpr const char* kLeaveLineScript = R"lua(
local left = redis.call('ZREM', KEYS[1], ARGV[1])
if KEYS[3] then redis.call('LREM', KEYS[3], 0, ARGV[1]) end
if left == 1 and redis.call('EXISTS', KEYS[2]) == 0 then redis.call('PUBLISH', ARGV[2], '1') end
return left
)lua";

// read renewal. KEYS[2i-1] = L:readers, KEYS[2i] = L:readers:fence;
// ARGV[2i-1] owner, ARGV[2i] lease ms. Extends each reader whose lease is
// still live; never re-adds one. Returns 1 / 0 per reader.
inline constexpr JoinedScript kRenewReadScriptBody{kTypeHelpers, R"lua(
local now = now_ms()
local out = {}
for i = 1, #KEYS / 2 do
  local r, owner, lease = KEYS[2 * i - 1], ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local until_ms = redis.call('ZSCORE', r, owner)
  if until_ms and tonumber(until_ms) > now then
    redis.call('ZADD', r, now + lease, owner)
    live_for(r, lease)
    live_for(KEYS[2 * i], lease)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)lua"};
inline constexpr const char* kRenewReadScript = kRenewReadScriptBody.text;

}  // namespace weave::redis
