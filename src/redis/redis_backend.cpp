// The redis:// lock backend: one Lua script call per acquire / release, one
// pipelined round trip per watchdog tick, Pub/Sub for waiting. See docs/redis.md.
#include <algorithm>
#include <string>

#include "redis/connection.h"
#include "redis/executor.h"
#include "redis/lock_requests.h"
#include "redis/scripts.h"
#include "redis/subscriber.h"
#include "weave/error.h"
#include "weave/redis.h"

namespace weave {
namespace redis {
namespace {

class Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<Executor> e, std::unique_ptr<Subscriber::Interest> i)
      : exec_(std::move(e)), interest_(std::move(i)) {}
  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    return interest_->wait_until(deadline);
  }

 private:
  std::shared_ptr<Executor> exec_;  // its subscriber outlives interest_
  std::unique_ptr<Subscriber::Interest> interest_;
};

class RedisLockBackend final : public LockBackend {
 public:
  RedisLockBackend(std::shared_ptr<Executor> exec, std::string key_prefix)
      : exec_(std::move(exec)), prefix_(std::move(key_prefix)) {}

  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    AcquireRequest request(prefix_, key, owner, lease);
    return AcquireRequest::parse(run_one(request.call(), "acquire").get());
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    ReleaseRequest request(prefix_, key, owner);
    return ReleaseRequest::parse(run_one(request.call(), "release").get());
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    if (items.empty()) return {};
    RenewRequest request(prefix_, items, *exec_);
    return request.parse(exec_->run(request.calls(), "renew"));
  }

  // ---- lock types: one script call each (scripts.h, docs/redis.md) ----

  bool supports(LockType) const override { return true; }

  AcquireResult try_acquire_as(LockType type, std::string_view key, std::string_view owner,
                               std::chrono::milliseconds lease, std::chrono::milliseconds entry) override {
    if (type == LockType::reentrant) return try_acquire(key, owner, lease);
    const std::string lock = lock_key(key);
    const std::string fence = lock + ":fence";
    const std::string ms = std::to_string(std::max<long long>(1, lease.count()));
    const std::string entry_ms = std::to_string(std::max<long long>(0, entry.count()));
    std::string a = lock + (type == LockType::fair ? ":line" : ":readers");
    std::string b = lock + (type == LockType::fair ? ":line:until" : ":readers:fence");
    const std::string writers = lock + ":writers";
    ScriptCall call;
    if (type == LockType::fair)
      call = {kAcquireFairScript, {lock, fence, a, b}, {owner, ms, entry_ms}};
    else if (type == LockType::read)
      call = {kAcquireReadScript, {lock, fence, a, b, writers}, {owner, ms}};
    else
      call = {kAcquireWriteScript, {lock, fence, a, b, writers}, {owner, ms, entry_ms}};
    return AcquireRequest::parse(run_one(std::move(call), "acquire").get());
  }

  ReleaseResult release_as(LockType type, std::string_view key, std::string_view owner) override {
    if (type != LockType::read) return release(key, owner);  // fair, write: the exclusive holder
    const std::string lock = lock_key(key);
    const std::string readers = lock + ":readers", fences = lock + ":readers:fence";
    const std::string channel = lock + ":released";
    return ReleaseRequest::parse(run_one({kReleaseReadScript, {readers, fences}, {owner, channel}}, "release").get());
  }

  void leave_queue(LockType type, std::string_view key, std::string_view owner) override {
    if (type != LockType::fair && type != LockType::write) return;
    const std::string lock = lock_key(key);
    const std::string channel = lock + ":released";
    const std::string line = lock + ":line";
    const std::string places = lock + (type == LockType::fair ? ":line:until" : ":writers");
    ScriptCall call{kLeaveLineScript, {places, lock}, {owner, channel}};
    if (type == LockType::fair) call.keys.push_back(line);
    run_one(std::move(call), "leave line");
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    auto interest = exec_->subscribe(lock_key(key) + ":released");
    return std::make_unique<Waiter>(exec_, std::move(interest));
  }

 private:
  // "{<prefix><key>}": the braces make it a hash tag, so the fencing counter
  // ("{...}:fence") always lands in the same cluster slot.
  std::string lock_key(std::string_view key) const { return lock_key_for(prefix_, key); }

  Reply run_one(ScriptCall&& call, const char* what) {
    std::vector<ScriptCall> one;
    one.push_back(std::move(call));
    return std::move(exec_->run(one, what).front());
  }

  std::shared_ptr<Executor> exec_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<LockBackend> make_script_backend(std::shared_ptr<Executor> executor, std::string key_prefix) {
  return std::make_shared<RedisLockBackend>(std::move(executor), std::move(key_prefix));
}

}  // namespace redis

std::shared_ptr<LockBackend> make_redis_lock_backend(const LockOptions& options) {
  LockUrl url = parse_lock_url(options.url);
  if (url.scheme != "redis") throw ConfigError("'" + options.url + "' is not a redis:// URL");
  if (url.port == 0)
    throw ConfigError("lock url '" + options.url + "': redis:// takes one host; several are redlock:// (independent "
                      "masters) or redis+cluster:// (one cluster)");
  auto exec = std::make_shared<redis::NodeExecutor>(redis::endpoint_from(url, options), options.pool_size);
  return redis::make_script_backend(std::move(exec), options.key_prefix);
}

}  // namespace weave
