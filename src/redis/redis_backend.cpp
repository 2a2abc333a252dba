// The redis:// lock backend: one Lua script call per acquire / release, one
// pipelined round trip per watchdog tick, Pub/Sub for waiting. See docs/redis.md.
#include <algorithm>
#include <string>

#include "redis/connection.h"
#include "redis/executor.h"
#include "redis/lock_requests.h"
#include "redis/subscriber.h"
#include "weave/error.h"
#include "weave/redis.h"

namespace WEAVE_NAMESPACE {
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
  RedisLockBackend(std::shared_ptr<Executor> exec, std::string key_prefix, CounterPolicy counter)
      : exec_(std::move(exec)), prefix_(std::move(key_prefix)), counter_(counter) {}

  AcquireResult try_acquire(std::string_view key, std::string_view owner,
                            std::chrono::milliseconds lease) override {
    return try_acquire_as(LockType::reentrant, key, owner, lease, std::chrono::milliseconds(0));
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    return release_as(LockType::reentrant, key, owner);
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    if (items.empty()) return {};
    RenewRequest request(prefix_, items, *exec_, counter_);
    return request.parse(exec_->run(request.calls(), "renew"));
  }

  // ---- lock types: one script call each (scripts.h, docs/redis.md) ----

  bool supports(LockType) const override { return true; }

  AcquireResult try_acquire_as(LockType type, std::string_view key, std::string_view owner,
                               std::chrono::milliseconds lease, std::chrono::milliseconds entry) override {
    AcquireRequest request(prefix_, key, owner, lease, counter_, type, entry);
    return AcquireRequest::parse(run_one(request.call(), "acquire").get());
  }

  ReleaseResult release_as(LockType type, std::string_view key, std::string_view owner) override {
    ReleaseRequest request(prefix_, key, owner, counter_, type);
    return ReleaseRequest::parse(run_one(request.call(), "release").get());
  }

  void leave_queue(LockType type, std::string_view key, std::string_view owner) override {
    if (!LeaveLineRequest::applies(type)) return;
    LeaveLineRequest request(prefix_, key, owner, type);
    run_one(request.call(), "leave line");
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    auto interest = exec_->subscribe(release_channel(prefix_, key));
    return std::make_unique<Waiter>(exec_, std::move(interest));
  }

 private:
  Reply run_one(ScriptCall&& call, const char* what) {
    std::vector<ScriptCall> one;
    one.push_back(std::move(call));
    return std::move(exec_->run(one, what).front());
  }

  std::shared_ptr<Executor> exec_;
  std::string prefix_;
  CounterPolicy counter_;
};

}  // namespace

std::shared_ptr<LockBackend> make_script_backend(std::shared_ptr<Executor> executor, const LockOptions& options) {
  return std::make_shared<RedisLockBackend>(std::move(executor), options.key_prefix,
                                            CounterPolicy::from(options, /*clock_floor=*/true));
}

}  // namespace redis

std::shared_ptr<LockBackend> make_redis_lock_backend(const LockOptions& options) {
  LockUrl url = parse_lock_url(options.url);
  if (url.scheme != "redis") throw ConfigError("'" + options.url + "' is not a redis:// URL");
  if (url.hosts.size() != 1)
    throw ConfigError("lock url '" + options.url + "': redis:// takes one host; several are redlock:// (independent "
                      "masters) or redis+cluster:// (one cluster)");
  auto exec = std::make_shared<redis::NodeExecutor>(redis::endpoint_from(url, url.hosts.front(), options),
                                                    options.pool_size);
  return redis::make_script_backend(std::move(exec), options);
}

}  // namespace weave
