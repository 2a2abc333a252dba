// The Lua scripts of the redis lock backend, all in one place (see docs/redis.md).
// Keys and values reach them only through KEYS / ARGV; they are loaded once per
// connection by SHA (EVALSHA, falling back to EVAL on NOSCRIPT). The calls
// that run them (which keys, which arguments) are built in lock_requests.cpp.
#pragma once

#include "weave/abi.h"

#include <cstddef>

namespace WEAVE_NAMESPACE::redis {

// ---- keys and their lifetimes; see docs/redis.md "Keys and their lifetimes" ----
// For lock key L = "{P K}" every name below starts with L's hash tag, so one
// script's keys always share a cluster slot:
//   L                exclusive holder (reentrant, fair and write), PX lease
//   L:fence          fencing counter (all types); PX: its longest lease + grace
//   L:line           fair: waiting owners in arrival order (list)
//   L:line:until     fair: owner -> expiry of its place in line, server ms (zset)
//   L:readers        read: owner -> lease expiry, server ms (zset)
//   L:readers:fence  read: owner -> its fencing token (hash)
//   L:writers        write: waiting writers, owner -> expiry of their place (zset)
// Every key has an expiry covering its longest member (a lease or a place in
// line). The counter alone outlives its last lease, by the grace (ARGV
// "grace", LockOptions::key_grace), and is cut down to the grace when that
// lease is released: so nothing is left of a lock the grace after its last
// lease, or place in line, ended. Expiries inside the keys are the server's
// TIME, so clocks of clients never meet.
//
// Fencing tokens: a token is max(counter + 1, TIME in µs) with the clock
// floor ("floor" = '1': redis://, cluster, sentinel), counter + 1 without it
// ('0': redlock, whose masters' clocks differ; see docs/scale-out.md); a
// missing counter starts at TIME in µs either way. The argument for why
// tokens keep increasing when a counter is gone is in docs/redis.md.

// Helpers of every script: expiries and the fencing counter.
inline constexpr char kCounterHelpers[] = R"lua(
-- Key k lives at least ms more (never shortened).
local function live_for(k, ms)
  if redis.call('PTTL', k) < ms then redis.call('PEXPIRE', k, ms) end
end
-- Key k lives at most ms more (a key without expiry gets one).
local function live_at_most(k, ms)
  local left = redis.call('PTTL', k)
  if left == -1 or left > ms then redis.call('PEXPIRE', k, ms) end
end
-- The next fencing token of counter k (its expiry is kept: callers extend it).
local function next_fence(k, floor)
  local c = redis.call('GET', k)
  if c == false or floor == '1' then
    local t = redis.call('TIME')
    local now = t[1] .. string.format('%06d', tonumber(t[2]))
    if c == false or tonumber(c) < tonumber(now) then
      redis.call('SET', k, now, 'KEEPTTL')
      return tonumber(now)
    end
  end
  return redis.call('INCR', k)
end
-- The caller takes the exclusive key for ms: its new token.
local function take(lock, counter, owner, ms, grace, floor)
  local fence = next_fence(counter, floor)
  redis.call('SET', lock, owner, 'PX', ms)
  live_for(counter, ms + grace)
  return {1, fence}
end
-- The caller holds it already (a resent acquire): extend, same token. Nobody
-- else can have moved the counter while the lease is held, and it outlives
-- the lease; should it be gone anyway (evicted, deleted by hand), a new
-- token from a fresh counter, never 0 or a value handed out since.
local function refresh(lock, counter, ms, grace, floor)
  redis.call('PEXPIRE', lock, ms)
  local fence = redis.call('GET', counter)
  if fence == false then fence = next_fence(counter, floor) end
  live_for(counter, ms + grace)
  return {1, tonumber(fence)}
end
)lua";

// Helpers of the lock types: server time in ms, and dropping readers and
// waiting writers whose time ran out.
inline constexpr char kTypeHelpers[] = R"lua(
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
)lua";

// A script body = helpers followed by its own text, joined at compile time
// (static storage: the executor identifies a script by its address).
template <std::size_t... N>
struct JoinedScript {
  char text[(N + ...) - sizeof...(N) + 1] = {};
  constexpr JoinedScript(const char (&... parts)[N]) {
    std::size_t at = 0;
    auto append = [&](const char* part, std::size_t n) {
      for (std::size_t i = 0; i + 1 < n; ++i) text[at++] = part[i];
    };
    (append(parts, N), ...);
  }
};

// Every acquire script: ARGV = {owner, lease ms, place-in-line ms (0 = do not
// queue; fair and write only), grace ms, floor}. Returns {1, fencing token}
// when acquired (or refreshed by the same owner), {0, ms until that may
// change (the holder's pttl, or -1 unknown)} otherwise.

// reentrant. KEYS = {L, L:fence}.
inline constexpr JoinedScript kAcquireScriptBody{kCounterHelpers, R"lua(
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local holder = redis.call('GET', KEYS[1])
if holder == false then return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5]) end
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
return {0, redis.call('PTTL', KEYS[1])}
)lua"};
inline constexpr const char* kAcquireScript = kAcquireScriptBody.text;

// Exclusive release (reentrant, fair, write). KEYS = {L, L:fence};
// ARGV = {owner, channel, grace ms}. Compare-and-delete; the counter is left
// to live the grace; wakes waiters with one PUBLISH. Returns 1 released, 0 lost.
inline constexpr JoinedScript kReleaseScriptBody{kCounterHelpers, R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  live_at_most(KEYS[2], tonumber(ARGV[3]))
  redis.call('PUBLISH', ARGV[2], '1')
  return 1
end
return 0
)lua"};
inline constexpr const char* kReleaseScript = kReleaseScriptBody.text;

// Exclusive renewal. KEYS = {L1, L1:fence, L2, L2:fence, ...};
// ARGV = {grace ms, owner1, lease1 ms, owner2, lease2 ms, ...}.
// Compare-and-pexpire for each lease (its counter outlives it by the grace);
// never recreates a key. Returns 1 (owned, extended) / 0 (lost) per lease.
inline constexpr JoinedScript kRenewScriptBody{kCounterHelpers, R"lua(
local grace = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 2 do
  if redis.call('GET', KEYS[2 * i - 1]) == ARGV[2 * i] then
    local ms = tonumber(ARGV[2 * i + 1])
    redis.call('PEXPIRE', KEYS[2 * i - 1], ms)
    live_for(KEYS[2 * i], ms + grace)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)lua"};
inline constexpr const char* kRenewScript = kRenewScriptBody.text;

// ---- lock types (fair, read, write); see docs/redis.md "Lock types" ----

// fair. KEYS = {L, L:fence, L:line, L:line:until}. Drops waiters whose place
// ran out; grants when L is free and the caller is first in line (or the
// line is empty); otherwise queues / refreshes the caller. When not
// acquired: ms until the holder's lease or the first waiter's place runs out.
inline constexpr JoinedScript kAcquireFairScriptBody{kCounterHelpers, kTypeHelpers, R"lua(
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local now = now_ms()
local dead = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for _, o in ipairs(dead) do redis.call('LREM', KEYS[3], 0, o) end
if #dead > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now) end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
local first = redis.call('LINDEX', KEYS[3], 0)
if holder == false and (first == false or first == ARGV[1]) then
  if first then
    redis.call('LPOP', KEYS[3])
    redis.call('ZREM', KEYS[4], ARGV[1])
  end
  return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5])
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

// read. KEYS = {L, L:fence, L:readers, L:readers:fence, L:writers}. Granted
// unless a writer holds L or a writer waits (writer preference). Each reader
// keeps its own token in L:readers:fence; the counter outlives every reader
// by the grace.
inline constexpr JoinedScript kAcquireReadScriptBody{kCounterHelpers, kTypeHelpers, R"lua(
local lease, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local now = now_ms()
prune_rw(KEYS[3], KEYS[4], KEYS[5], now)
local function keep(fence)
  redis.call('ZADD', KEYS[3], now + lease, ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[1], fence)
  live_for(KEYS[3], lease)
  live_for(KEYS[4], lease)
  live_for(KEYS[2], lease + grace)
  return {1, tonumber(fence)}
end
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return keep(redis.call('HGET', KEYS[4], ARGV[1]) or next_fence(KEYS[2], ARGV[5]))
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('PTTL', KEYS[1])} end
local w = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
if #w > 0 then return {0, math.max(1, tonumber(w[2]) - now)} end
return keep(next_fence(KEYS[2], ARGV[5]))
)lua"};
inline constexpr const char* kAcquireReadScript = kAcquireReadScriptBody.text;

// write. KEYS = {L, L:fence, L:readers, L:readers:fence, L:writers}. Granted
// when L is free and no reader's lease is live; otherwise the caller waits
// in L:writers (which holds back new readers).
inline constexpr JoinedScript kAcquireWriteScriptBody{kCounterHelpers, kTypeHelpers, R"lua(
local ms, grace = tonumber(ARGV[2]), tonumber(ARGV[4])
local now = now_ms()
prune_rw(KEYS[3], KEYS[4], KEYS[5], now)
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return refresh(KEYS[1], KEYS[2], ms, grace, ARGV[5]) end
if holder == false and redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[5], ARGV[1])
  return take(KEYS[1], KEYS[2], ARGV[1], ms, grace, ARGV[5])
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

// read release. KEYS = {L:readers, L:readers:fence, L:fence};
// ARGV = {owner, channel, grace ms}. Removes the reader (and readers whose
// lease ran out); the keys then live only as long as the remaining readers
// (the counter the grace more). The last one out wakes waiters (a writer may
// go). Returns 1 released, 0 lost (not a reader any more, or its lease ran out).
inline constexpr JoinedScript kReleaseReadScriptBody{kCounterHelpers, kTypeHelpers, R"lua(
local now = now_ms()
local grace = tonumber(ARGV[3])
local until_ms = redis.call('ZSCORE', KEYS[1], ARGV[1])
if until_ms == false then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
prune_readers(KEYS[1], KEYS[2], now)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if #last == 0 then
  live_at_most(KEYS[3], grace)
  redis.call('PUBLISH', ARGV[2], '1')
else
  local left = math.max(1, tonumber(last[2]) - now)
  live_at_most(KEYS[1], left)
  live_at_most(KEYS[2], left)
  live_at_most(KEYS[3], left + grace)
end
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

// read renewal. KEYS = {R1, R1:fence, C1, R2, R2:fence, C2, ...} (L:readers,
// L:readers:fence, L:fence of each reader's lock); ARGV = {grace ms, owner1,
// lease1 ms, ...}. Extends each reader whose lease is still live (and its
// counter, by the grace more); never re-adds one. Returns 1 / 0 per reader.
inline constexpr JoinedScript kRenewReadScriptBody{kCounterHelpers, kTypeHelpers, R"lua(
local now = now_ms()
local grace = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS / 3 do
  local r, owner, lease = KEYS[3 * i - 2], ARGV[2 * i], tonumber(ARGV[2 * i + 1])
  local until_ms = redis.call('ZSCORE', r, owner)
  if until_ms and tonumber(until_ms) > now then
    redis.call('ZADD', r, now + lease, owner)
    live_for(r, lease)
    live_for(KEYS[3 * i - 1], lease)
    live_for(KEYS[3 * i], lease + grace)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
)lua"};
inline constexpr const char* kRenewReadScript = kRenewReadScriptBody.text;

// ---- redlock:// ----

// Raises a master's fencing counter to at least ARGV[1] (never lowers it),
// keeping it at least ARGV[2] ms (the lease + grace). KEYS = {L:fence}. Sent
// after an acquisition whose majority answered different counters, so that
// every master of that majority is at least at the token handed out (see
// docs/scale-out.md, "Fencing tokens"). Returns 1.
inline constexpr JoinedScript kRaiseFenceScriptBody{kCounterHelpers, R"lua(
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL') end
live_for(KEYS[1], tonumber(ARGV[2]))
return 1
)lua"};
inline constexpr const char* kRaiseFenceScript = kRaiseFenceScriptBody.text;

}  // namespace weave::redis
