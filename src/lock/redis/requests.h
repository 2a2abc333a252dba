// The lock protocol's script calls, apart from how they are sent: each request
// builds its ScriptCall(s) and reads the reply. The redis backend sends them
// through an Executor; redlock sends the same request to every master at once
// (store::run_on_each). Scripts and their keys: src/lock/scripts/, docs/redis.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/executor.h"
#include "store/reply.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::lock_redis {

// How a lock's fencing counter lives and counts (docs/redis.md, "Keys and
// their lifetimes", "Fencing tokens").
struct CounterPolicy {
  // The counter outlives the lock's last lease by this much (at least 1 ms).
  std::chrono::milliseconds grace{10'000};
  // Tokens never fall below the server's TIME in µs, so a counter that went
  // back (a failover to a replica that missed increments) still counts up.
  // Off for redlock: each master's clock would give each master another token.
  bool clock_floor = true;
  // grace from LockOptions::key_grace.
  static CounterPolicy from(const LockOptions& options, bool clock_floor);
};

// Requests hold the strings their calls point into: build one, keep it alive
// while its calls are sent, and do not copy or move it.

// Any lock type; `entry` > 0 queues the caller (fair, write) when not granted.
// reentrant: `handoff_turn` > 0 keeps the line of starving waiters, which a
// `starving` caller joins when refused (AcquireRequest).
class AcquireCommand {
 public:
  AcquireCommand(std::string_view prefix, std::string_view key, std::string_view owner,
                 std::chrono::milliseconds lease, const CounterPolicy& counter, LockType type = LockType::reentrant,
                 std::chrono::milliseconds entry = std::chrono::milliseconds(0),
                 std::chrono::milliseconds handoff_turn = std::chrono::milliseconds(0), bool starving = false);
  AcquireCommand(const AcquireCommand&) = delete;
  store::ScriptCall call() const;
  // {1, fencing token} or {0, ms until it may change} (every acquire script).
  static AcquireResult parse(const store::Reply& r);

 private:
  LockType type_;
  std::string lock_, fence_, a_, b_, writers_, ms_, entry_, grace_;
  std::string_view owner_, floor_, starving_;
};

// Any lock type (fair and write release the exclusive key like reentrant);
// reentrant with `handoff_turn` > 0 starts the first starving waiter's turn.
class ReleaseCommand {
 public:
  ReleaseCommand(std::string_view prefix, std::string_view key, std::string_view owner, const CounterPolicy& counter,
                 LockType type = LockType::reentrant,
                 std::chrono::milliseconds handoff_turn = std::chrono::milliseconds(0));
  ReleaseCommand(const ReleaseCommand&) = delete;
  store::ScriptCall call() const;
  static ReleaseResult parse(const store::Reply& r);

 private:
  bool read_;
  std::string keys_[5], channel_, grace_, turn_;
  std::string_view owner_;
};

// A fair, write or starving reentrant waiter leaves its place in line.
class LeaveLineCommand {
 public:
  LeaveLineCommand(std::string_view prefix, std::string_view key, std::string_view owner, LockType type);
  LeaveLineCommand(const LeaveLineCommand&) = delete;
  // Readers have no place in line.
  static bool applies(LockType type) { return type != LockType::read; }
  store::ScriptCall call() const;

 private:
  bool line_;  // fair and reentrant wait in L:line; writers in L:writers
  std::string lock_, places_, line_key_, channel_;
  std::string_view owner_;
};

// One watchdog batch: items grouped by shard (a script call touches one
// cluster slot) and by kind (read leases live in their own zset), in chunks.
class RenewCommand {
 public:
  RenewCommand(std::string_view prefix, std::span<const RenewItem> items, const store::Executor& executor,
               const CounterPolicy& counter);
  RenewCommand(const RenewCommand&) = delete;
  const std::vector<store::ScriptCall>& calls() const { return calls_; }
  // One reply per call, in order -> one result per item, in the items' order.
  std::vector<RenewResult> parse(const std::vector<store::Reply>& replies) const;

 private:
  std::size_t items_;
  std::deque<std::string> storage_;  // stable addresses for the views
  std::vector<store::ScriptCall> calls_;
  std::vector<std::vector<std::size_t>> members_;  // item indexes per call
};

// redlock: raises one master's counter of `key` to at least `token`, and keeps
// it for the lease + grace (docs/scale-out.md, "Fencing tokens").
class RaiseFenceCommand {
 public:
  RaiseFenceCommand(std::string_view prefix, std::string_view key, std::uint64_t token,
                    std::chrono::milliseconds lease, const CounterPolicy& counter);
  RaiseFenceCommand(const RaiseFenceCommand&) = delete;
  store::ScriptCall call() const;
  static void parse(const store::Reply& r);

 private:
  std::string fence_, token_, keep_ms_;
};

// An operator's view of one lock (LockBackend::list), read-only.
class InspectCommand {
 public:
  InspectCommand(std::string_view prefix, std::string_view key);
  InspectCommand(const InspectCommand&) = delete;
  store::ScriptCall call() const;
  LockState parse(const store::Reply& r) const;

 private:
  std::string key_, keys_[6];
};

// Frees a lock by force (LockBackend::force_release). The call carries a
// request id: sent again (its reply lost), it answers as its first send did
// and frees nothing taken since.
class ForceReleaseCommand {
 public:
  ForceReleaseCommand(std::string_view prefix, std::string_view key, const CounterPolicy& counter);
  ForceReleaseCommand(const ForceReleaseCommand&) = delete;
  store::ScriptCall call() const;
  static ForcedRelease parse(const store::Reply& r);

 private:
  std::string keys_[5], channel_, grace_, request_;
  std::string_view floor_;
};

// The SCAN pattern of every Redis key of the locks whose keys match the glob
// `pattern`, and the lock key one of those Redis keys belongs to (empty for
// another key).
std::string lock_scan_pattern(std::string_view prefix, std::string_view pattern);
std::string lock_of_redis_key(std::string_view prefix, std::string_view redis_key);

// The Redis name of lock `key`: "{<prefix><key>}" (a hash tag: its fencing
// counter "{...}:fence" and release channel "{...}:released" share its slot;
// this file names them all).
std::string lock_key_for(std::string_view prefix, std::string_view key);

// The Pub/Sub channel a release of `key` is published on ("{...}:released").
std::string release_channel(std::string_view prefix, std::string_view key);

}  // namespace weave::lock_redis
