// The lock scripts over one store Executor (redis://, redis+cluster://,
// redis+sentinel://): one script call per acquire / release, one pipelined
// round trip per watchdog tick, Pub/Sub for waiting. See docs/redis.md.
#include <algorithm>
#include <string>

#include "lock/redis/backends.h"
#include "lock/redis/requests.h"
#include "store/subscriber.h"
#include "weave/error.h"
#include "weave/redis.h"

namespace WEAVE_NAMESPACE {
namespace lock_redis {
namespace {

class Waiter final : public LockWaiter {
 public:
  Waiter(std::shared_ptr<store::Executor> e, std::unique_ptr<store::Subscriber::Interest> i)
      : exec_(std::move(e)), interest_(std::move(i)) {}
  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    return interest_->wait_until(deadline);
  }

 private:
  std::shared_ptr<store::Executor> exec_;  // its subscriber outlives interest_
  std::unique_ptr<store::Subscriber::Interest> interest_;
};

class RedisLockBackend final : public LockBackend {
 public:
  RedisLockBackend(std::shared_ptr<store::Executor> exec, std::string key_prefix, CounterPolicy counter)
      : exec_(std::move(exec)), prefix_(std::move(key_prefix)), counter_(counter) {}

  // Every lock type: one script call each (src/lock/scripts/, docs/redis.md).
  AcquireResult acquire(const AcquireRequest& r) override {
    AcquireCommand command(prefix_, r.key, r.owner_token, r.lease, counter_, r.type, r.queue_entry);
    return AcquireCommand::parse(run_one(command.call(), "acquire"));
  }

  ReleaseResult release(const ReleaseRequest& r) override {
    ReleaseCommand command(prefix_, r.key, r.owner_token, counter_, r.type);
    return ReleaseCommand::parse(run_one(command.call(), "release"));
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    if (items.empty()) return {};
    RenewCommand command(prefix_, items, *exec_, counter_);
    return command.parse(exec_->run(command.calls(), "renew"));
  }

  bool supports(LockType) const override { return true; }

  void leave_queue(const ReleaseRequest& r) override {
    if (!LeaveLineCommand::applies(r.type)) return;
    LeaveLineCommand command(prefix_, r.key, r.owner_token, r.type);
    run_one(command.call(), "leave line");
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    auto interest = exec_->subscribe(release_channel(prefix_, key));
    return std::make_unique<Waiter>(exec_, std::move(interest));
  }

 private:
  store::Reply run_one(store::ScriptCall&& call, const char* what) {
    std::vector<store::ScriptCall> one;
    one.push_back(std::move(call));
    return std::move(exec_->run(one, what).front());
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_;
  CounterPolicy counter_;
};

}  // namespace

std::shared_ptr<LockBackend> make_script_backend(std::shared_ptr<store::Executor> executor,
                                                 const LockOptions& options) {
  return std::make_shared<RedisLockBackend>(std::move(executor), options.key_prefix,
                                            CounterPolicy::from(options, /*clock_floor=*/true));
}

std::shared_ptr<LockBackend> make_store_backend(const LockOptions& options) {
  return make_script_backend(store::open_executor(options.url, store::connection_settings(options)), options);
}

}  // namespace lock_redis

std::shared_ptr<LockBackend> make_redis_lock_backend(const LockOptions& options) {
  if (parse_store_url(options.url).scheme != "redis") throw ConfigError("'" + options.url + "' is not a redis:// URL");
  return lock_redis::make_store_backend(options);
}

}  // namespace weave
