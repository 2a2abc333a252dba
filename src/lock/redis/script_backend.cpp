// The lock scripts over one store Executor (redis://, redis+cluster://,
// redis+sentinel://): one script call per acquire / release, one pipelined
// round trip per watchdog tick, Pub/Sub for waiting. See docs/redis.md.
#include <fnmatch.h>

#include <algorithm>
#include <deque>
#include <set>
#include <string>

#include "lock/direct_backend.h"
#include "lock/redis/backends.h"
#include "lock/redis/requests.h"
#include "store/subscriber.h"
#include "weave/url.h"
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
    return interest_->wait_until(deadline, &message_);
  }
  // release.lua publishes the first starving waiter's owner token, else "1".
  std::string_view designated() const override { return message_ == "1" ? std::string_view() : message_; }
  bool wake_on_change(std::function<void()> wake) override {
    interest_->on_change(std::move(wake));
    return true;
  }

 private:
  std::shared_ptr<store::Executor> exec_;  // its subscriber outlives interest_
  std::unique_ptr<store::Subscriber::Interest> interest_;
  std::string message_;
};

class RedisLockBackend final : public LockBackend, public detail::DirectLockBackend {
 public:
  RedisLockBackend(std::shared_ptr<store::Executor> exec, std::string key_prefix, CounterPolicy counter)
      : exec_(std::move(exec)), prefix_(std::move(key_prefix)), counter_(counter) {}

  // Every lock type: one script call each (src/lock/scripts/, docs/redis.md).
  AcquireResult acquire(const AcquireRequest& r) override {
    AcquireCommand command(prefix_, r.key, r.owner_token, r.lease, counter_, r.type, r.queue_entry, r.handoff_turn,
                           r.starving);
    return AcquireCommand::parse(store::run_one(*exec_, command.call(), "acquire"));
  }

  ReleaseResult release(const ReleaseRequest& r) override {
    ReleaseCommand command(prefix_, r.key, r.owner_token, counter_, r.type, r.handoff_turn);
    return ReleaseCommand::parse(store::run_one(*exec_, command.call(), "release"));
  }

  std::unique_ptr<store::DirectRequest<AcquireResult>> direct_acquire(const AcquireRequest& r) override {
    return std::make_unique<store::DirectCall<AcquireResult, AcquireCommand>>(
        *exec_, "acquire", prefix_, r.key, r.owner_token, r.lease, counter_, r.type, r.queue_entry, r.handoff_turn,
        r.starving);
  }

  std::unique_ptr<store::DirectRequest<ReleaseResult>> direct_release(const ReleaseRequest& r) override {
    return std::make_unique<store::DirectCall<ReleaseResult, ReleaseCommand>>(*exec_, "release", prefix_, r.key,
                                                                              r.owner_token, counter_, r.type,
                                                                              r.handoff_turn);
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
    store::run_one(*exec_, command.call(), "leave line");
  }

  std::vector<LockState> list(std::string_view pattern) override {
    const std::string glob(pattern);
    std::set<std::string> keys;
    store::scan_keys(*exec_, lock_scan_pattern(prefix_, pattern), [&](const std::vector<std::string>& page) {
      for (const std::string& redis_key : page) {
        std::string key = lock_of_redis_key(prefix_, redis_key);
        if (!key.empty() && ::fnmatch(glob.c_str(), key.c_str(), 0) == 0) keys.insert(std::move(key));
      }
    }, "list locks");
    std::vector<LockState> out;
    std::vector<std::string> all(keys.begin(), keys.end());
    constexpr std::size_t kChunk = 500;  // inspections per pipelined round trip
    for (std::size_t from = 0; from < all.size(); from += kChunk) {
      std::deque<InspectCommand> commands;
      std::vector<store::ScriptCall> calls;
      for (std::size_t i = from; i < std::min(all.size(), from + kChunk); ++i) {
        commands.emplace_back(prefix_, all[i]);
        calls.push_back(commands.back().call());
      }
      const std::vector<store::Reply> replies = exec_->run(calls, "list locks");
      for (std::size_t i = 0; i < commands.size(); ++i) {
        LockState st = commands[i].parse(replies[i]);
        if (!st.holders.empty() || !st.line.empty() || st.fence != 0) out.push_back(std::move(st));
      }
    }
    return out;  // (sorted: the keys were)
  }

  ForcedRelease force_release(std::string_view key) override {
    ForceReleaseCommand command(prefix_, key, counter_);
    return ForceReleaseCommand::parse(store::run_one(*exec_, command.call(), "force release"));
  }

  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    auto interest = exec_->subscribe(release_channel(prefix_, key));
    return std::make_unique<Waiter>(exec_, std::move(interest));
  }

 private:
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
  if (parse_store_url(options.url).scheme != "redis") throw ConfigError("'" + redact_url(options.url) + "' is not a redis:// URL");
  return lock_redis::make_store_backend(options);
}

}  // namespace weave
