// redlock://h1:p1,h2:p2,h3:p3: the redis backend's scripts on N independent
// masters, a lock held when a majority took it within the validity window.
// Protocol, fencing argument and limits: docs/scale-out.md.
#include <algorithm>
#include <atomic>
#include <optional>
#include <random>
#include <thread>

#include "redis/executor.h"
#include "redlock/fan_out.h"
#include "redlock/redlock.h"
#include "weave/error.h"

namespace weave::redlock {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Raises a master's fencing counter to at least ARGV[1] (never lowers it).
// KEYS[1] the counter. Sent after an acquisition whose majority answered
// different counters, so that every master of that majority is at least at
// the token handed out (see docs/scale-out.md, "Fencing tokens").
constexpr const char* kRaiseScript = R"lua(
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
)lua";

// Attempts per try_acquire when the votes split (some masters granted, but
// no majority): contenders back off for a random few ms and try again.
constexpr int kAttempts = 3;

struct Master {
  std::shared_ptr<redis::NodeExecutor> exec;
  std::shared_ptr<LockBackend> backend;  // the redis scripts on this master
};

class Waiter final : public LockWaiter {
 public:
  explicit Waiter(std::shared_ptr<redis::Bell> bell) : bell_(std::move(bell)), seen_(0) {}
  std::vector<std::unique_ptr<redis::Subscriber::Interest>> interests;
  std::vector<std::shared_ptr<redis::NodeExecutor>> keep;  // subscribers outlive interests

  bool wait_until(Clock::time_point deadline) override {
    std::unique_lock g(bell_->mutex);
    if (!bell_->cv.wait_until(g, deadline, [&] { return bell_->rings != seen_; })) return false;
    seen_ = bell_->rings;
    return true;
  }

  ~Waiter() override { interests.clear(); }

 private:
  std::shared_ptr<redis::Bell> bell_;
  std::uint64_t seen_;
};

class RedlockBackend final : public LockBackend {
 public:
  RedlockBackend(std::vector<Master> masters, std::string prefix, int pool_size)
      : masters_(std::move(masters)),
        quorum_(masters_.size() / 2 + 1),
        prefix_(std::move(prefix)),
        fan_(static_cast<int>((masters_.size() - 1) * static_cast<std::size_t>(std::max(1, pool_size)))) {}

  AcquireResult try_acquire(std::string_view key, std::string_view owner, milliseconds lease) override {
    const std::size_t n = masters_.size();
    if (lease.count() <= 0) lease = milliseconds(1);
    const milliseconds drift = lease / 100 + milliseconds(2);
    for (int attempt = 1;; ++attempt) {
      std::vector<std::optional<AcquireResult>> got(n);
      std::vector<std::string> errors(n);
      const auto start = Clock::now();
      fan_.run(n, [&](std::size_t i) {
        try {
          got[i] = masters_[i].backend->try_acquire(key, owner, lease);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
      std::size_t granted = 0, failed = 0;
      std::uint64_t token = 0;
      bool differ = false;
      milliseconds holder_ttl{0};
      for (std::size_t i = 0; i < n; ++i) {
        if (!got[i]) {
          ++failed;
        } else if (got[i]->acquired) {
          if (granted > 0 && got[i]->fencing_token != token) differ = true;
          token = std::max(token, got[i]->fencing_token);
          ++granted;
        } else {
          holder_ttl = std::max(holder_ttl, got[i]->holder_ttl_left);
        }
      }
      if (granted >= quorum_ && differ) {
        // Counters diverged (a failed attempt, a restarted master): raise the
        // majority to the token so any later majority (which overlaps this
        // one) hands out a larger one.
        // A master that could not be raised does not count.
        granted -= raise(key, got, token);
      }
      const milliseconds validity =
          lease - std::chrono::duration_cast<milliseconds>(Clock::now() - start) - drift;
      if (granted >= quorum_ && validity.count() > 0) {
        AcquireResult out;
        out.acquired = true;
        out.fencing_token = token;
        out.validity = validity;
        return out;
      }
      // Not held: undo what was granted, on every master at once (also where
      // the answer was lost: the script may have run there).
      if (granted > 0 || failed > 0) release_all(key, owner);
      if (failed > n - quorum_)
        throw BackendUnavailable("weave redlock: only " + std::to_string(n - failed) + " of " +
                                 std::to_string(n) + " masters answered (a majority of " +
                                 std::to_string(quorum_) + " is needed): " + first_error(errors));
      if (granted == 0 || attempt == kAttempts) {
        AcquireResult out;
        out.holder_ttl_left = holder_ttl;
        return out;
      }
      // Split vote among contenders: back off for a random moment.
      thread_local std::minstd_rand rng(std::random_device{}());
      std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 5000));
    }
  }

  ReleaseResult release(std::string_view key, std::string_view owner) override {
    const std::size_t n = masters_.size();
    std::vector<std::optional<ReleaseResult>> got(n);
    std::vector<std::string> errors(n);
    fan_.run(n, [&](std::size_t i) {
      try {
        got[i] = masters_[i].backend->release(key, owner);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
    std::size_t released = 0, failed = 0;
    for (auto& g : got) {
      if (!g)
        ++failed;
      else if (*g == ReleaseResult::released)
        ++released;
    }
    if (released >= quorum_) return ReleaseResult::released;
    if (failed > n - quorum_)
      throw BackendUnavailable("weave redlock: release reached only " + std::to_string(n - failed) + " of " +
                               std::to_string(n) + " masters: " + first_error(errors));
    return ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    const std::size_t n = masters_.size();
    std::vector<std::vector<RenewResult>> got(n);
    std::vector<std::string> errors(n);
    fan_.run(n, [&](std::size_t i) {
      try {
        got[i] = masters_[i].backend->renew_batch(items);
        if (got[i].size() != items.size()) throw IoError("wrong number of renewals");
      } catch (const std::exception& e) {
        got[i].clear();
        errors[i] = e.what();
      }
    });
    std::size_t failed = 0;
    for (auto& e : errors)
      if (!e.empty()) ++failed;
    if (failed > n - quorum_)
      throw BackendUnavailable("weave redlock: renewal reached only " + std::to_string(n - failed) + " of " +
                               std::to_string(n) + " masters: " + first_error(errors));
    std::vector<RenewResult> out(items.size(), RenewResult::lost);
    for (std::size_t j = 0; j < items.size(); ++j) {
      std::size_t owned = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (errors[i].empty() && got[i][j] == RenewResult::owned) ++owned;
      if (owned >= quorum_) out[j] = RenewResult::owned;
    }
    return out;
  }

  // Subscribes on every master (a release on any of them wakes the waiter);
  // masters that cannot be reached are skipped as long as a majority can.
  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    const std::size_t n = masters_.size();
    auto bell = std::make_shared<redis::Bell>();
    auto waiter = std::make_unique<Waiter>(bell);
    waiter->interests.resize(n);
    std::vector<std::string> errors(n);
    const std::string channel = redis::lock_key_for(prefix_, key) + ":released";
    fan_.run(n, [&](std::size_t i) {
      try {
        waiter->interests[i] = masters_[i].exec->subscribe(channel, bell);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
    std::size_t failed = 0;
    for (auto& e : errors)
      if (!e.empty()) ++failed;
    for (auto& m : masters_) waiter->keep.push_back(m.exec);
    if (failed > n - quorum_)
      throw BackendUnavailable("weave redlock: cannot wait on a majority of masters: " + first_error(errors));
    std::erase(waiter->interests, nullptr);
    return waiter;
  }

 private:
  void release_all(std::string_view key, std::string_view owner) {
    fan_.run(masters_.size(), [&](std::size_t i) {
      try {
        masters_[i].backend->release(key, owner);
      } catch (const std::exception&) {
        // unreachable: its copy runs out with the lease
      }
    });
  }

  // Returns how many masters of the majority could not be raised.
  std::size_t raise(std::string_view key, const std::vector<std::optional<AcquireResult>>& got, std::uint64_t token) {
    const std::string counter = redis::lock_key_for(prefix_, key) + ":fence";
    const std::string value = std::to_string(token);
    std::atomic<std::size_t> failed{0};
    fan_.run(masters_.size(), [&](std::size_t i) {
      if (!got[i] || !got[i]->acquired || got[i]->fencing_token >= token) return;
      try {
        std::vector<redis::ScriptCall> call(1);
        call[0].body = kRaiseScript;
        call[0].keys = {counter};
        call[0].args = {value};
        masters_[i].exec->run(call, "raise fencing counter");
      } catch (const std::exception&) {
        ++failed;
      }
    });
    return failed.load();
  }

  static std::string first_error(const std::vector<std::string>& errors) {
    for (auto& e : errors)
      if (!e.empty()) return e;
    return "no answer";
  }

  std::vector<Master> masters_;
  std::size_t quorum_;
  std::string prefix_;
  FanOut fan_;
};

}  // namespace

std::shared_ptr<LockBackend> make_redlock_backend(const LockOptions& options) {
  std::vector<redis::Endpoint> eps = redis::endpoints_from_list(options);
  std::vector<Master> masters;
  for (auto& ep : eps) {
    Master m;
    m.exec = std::make_shared<redis::NodeExecutor>(ep, options.pool_size);
    m.backend = redis::make_script_backend(m.exec, options.key_prefix);
    masters.push_back(std::move(m));
  }
  return std::make_shared<RedlockBackend>(std::move(masters), options.key_prefix, options.pool_size);
}

}  // namespace weave::redlock
