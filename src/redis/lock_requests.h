// The lock protocol's script calls, apart from how they are sent: each request
// builds its ScriptCall(s) and reads the reply. The redis backend sends them
// through an Executor; redlock sends the same request to every master at once
// (redis::run_on_each). Scripts and their keys: scripts.h, docs/redis.md.
#pragma once

#include <chrono>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "redis/executor.h"
#include "weave/lock_backend.h"

namespace weave::redis {

// Requests hold the strings their calls point into: build one, keep it alive
// while its calls are sent, and do not copy or move it.

class AcquireRequest {
 public:
  AcquireRequest(std::string_view prefix, std::string_view key, std::string_view owner,
                 std::chrono::milliseconds lease);
  AcquireRequest(const AcquireRequest&) = delete;
  ScriptCall call() const;
  // {1, fencing token} or {0, ms until it may change} (every acquire script).
  static AcquireResult parse(const redisReply* r);

 private:
  std::string lock_, fence_, ms_;
  std::string_view owner_;
};

class ReleaseRequest {
 public:
  ReleaseRequest(std::string_view prefix, std::string_view key, std::string_view owner);
  ReleaseRequest(const ReleaseRequest&) = delete;
  ScriptCall call() const;
  static ReleaseResult parse(const redisReply* r);

 private:
  std::string lock_, channel_;
  std::string_view owner_;
};

// One watchdog batch: items grouped by shard (a script call touches one
// cluster slot) and by kind (read leases live in their own zset), in chunks.
class RenewRequest {
 public:
  RenewRequest(std::string_view prefix, std::span<const RenewItem> items, const Executor& executor);
  RenewRequest(const RenewRequest&) = delete;
  const std::vector<ScriptCall>& calls() const { return calls_; }
  // One reply per call, in order -> one result per item, in the items' order.
  std::vector<RenewResult> parse(const std::vector<Reply>& replies) const;

 private:
  std::size_t items_;
  std::deque<std::string> storage_;  // stable addresses for the views
  std::vector<ScriptCall> calls_;
  std::vector<std::vector<std::size_t>> members_;  // item indexes per call
};

}  // namespace weave::redis
