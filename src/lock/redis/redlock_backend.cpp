// redlock://h1:p1,h2:p2,h3:p3: the redis backend's scripts on N independent
// masters, a lock held when a majority took it within the validity window.
// Every request goes to all masters at once from the calling thread
// (store::run_on_each); only subscribing uses helper threads (FanOut).
// Protocol, fencing argument and limits: docs/scale-out.md.
#include <algorithm>
#include <optional>
#include <random>
#include <span>
#include <thread>
#include <type_traits>

#include "store/executor.h"
#include "lock/redis/requests.h"
#include "store/fan_out.h"
#include "lock/redis/backends.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::lock_redis {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Attempts per acquire when the votes split (some masters granted, but
// no majority): contenders back off for a random few ms and try again.
constexpr int kAttempts = 3;


// A wake-up asked for by wake_on_change(), run by the bell's next ring.
struct PendingWake {
  detail::Mutex mutex;
  std::function<void()> wake WEAVE_GUARDED_BY(mutex);
  void ring() {
    std::function<void()> w;
    {
      detail::Guard g(mutex);
      w = std::move(wake);
      wake = nullptr;
    }
    if (w) w();
  }
};

class Waiter final : public LockWaiter {
 public:
  explicit Waiter(std::shared_ptr<store::Bell> bell, std::shared_ptr<PendingWake> pending)
      : bell_(std::move(bell)), pending_(std::move(pending)), seen_(0) {}
  std::vector<std::unique_ptr<store::Subscriber::Interest>> interests;
  std::vector<std::shared_ptr<store::NodeExecutor>> keep;  // subscribers outlive interests

  bool wait_until(Clock::time_point deadline) override {
    detail::Guard g(bell_->mutex);
    const bool rang = bell_->mutex.wait_until(bell_->cv, deadline,
                                              [&]() WEAVE_REQUIRES(bell_->mutex) { return bell_->rings != seen_; });
    if (!rang) return false;
    seen_ = bell_->rings;
    return true;
  }

  bool wake_on_change(std::function<void()> wake) override {
    {
      detail::Guard g(pending_->mutex);
      pending_->wake = std::move(wake);
    }
    bool rang;
    {
      detail::Guard g(bell_->mutex);
      rang = bell_->rings != seen_;
    }
    if (rang) pending_->ring();  // rang already (whoever takes the wake-up first runs it)
    return true;
  }

  ~Waiter() override {
    interests.clear();
    detail::Guard g(pending_->mutex);
    pending_->wake = nullptr;
  }

 private:
  std::shared_ptr<store::Bell> bell_;
  std::shared_ptr<PendingWake> pending_;
  std::uint64_t seen_;
};

// What each master failed with (each fan-out task sets only its own slot).
class Failures {
 public:
  explicit Failures(std::size_t n) : each_(n) {}
  void record(std::size_t i, std::exception_ptr e) noexcept { each_[i] = std::move(e); }
  bool failed(std::size_t i) const { return each_[i] != nullptr; }
  std::size_t count() const { return each_.size() - static_cast<std::size_t>(std::count(each_.begin(), each_.end(), nullptr)); }

  // Too few masters answered. When every failure is a refusal that retrying
  // cannot fix (WRONGTYPE, NOPERM, WRONGPASS...) that refusal is the error;
  // otherwise the masters are unavailable.
  [[noreturn]] void raise(const std::string& context) const {
    std::exception_ptr first;
    bool permanent = true;
    std::string why = "no answer";
    for (const auto& e : each_) {
      if (!e) continue;
      if (!first) first = e;
      try {
        std::rethrow_exception(e);
      } catch (const Error& err) {
        if (first == e) why = err.what();
        permanent = permanent && !err.retryable();
      } catch (const std::exception& err) {
        if (first == e) why = err.what();
        permanent = false;
      }
    }
    if (first && permanent) std::rethrow_exception(first);
    throw BackendUnavailable(context + ": " + why);
  }

 private:
  std::vector<std::exception_ptr> each_;
};

class RedlockBackend final : public LockBackend {
 public:
  RedlockBackend(std::vector<std::shared_ptr<store::NodeExecutor>> masters, std::string prefix,
                 CounterPolicy counter)
      : masters_(std::move(masters)),
        quorum_(masters_.size() / 2 + 1),
        prefix_(std::move(prefix)),
        counter_(counter),
        fan_(static_cast<int>(masters_.size() - 1)) {
    for (auto& m : masters_) nodes_.push_back(m.get());
  }

  // Reentrant only (supports() says so): a lock type over N independent
  // masters would need its line or readers agreed by a majority.
  AcquireResult acquire(const AcquireRequest& r) override {
    const std::string_view key = r.key, owner = r.owner_token;
    milliseconds lease = r.lease;
    const std::size_t n = masters_.size();
    if (lease.count() <= 0) lease = milliseconds(1);
    const milliseconds drift = lease / 100 + milliseconds(2);
    for (int attempt = 1;; ++attempt) {
      Failures errors(n);
      AcquireCommand command(prefix_, key, owner, lease, counter_);
      const auto start = Clock::now();
      const std::vector<std::optional<AcquireResult>> got =
          on_all<AcquireResult>({command.call()}, errors, &AcquireCommand::parse);
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
        granted -= raise(key, got, token, lease);
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
        errors.raise("weave redlock: only " + std::to_string(n - failed) + " of " + std::to_string(n) +
                     " masters answered (a majority of " + std::to_string(quorum_) + " is needed)");
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

  ReleaseResult release(const ReleaseRequest& r) override {
    const std::string_view key = r.key, owner = r.owner_token;
    const std::size_t n = masters_.size();
    Failures errors(n);
    ReleaseCommand request(prefix_, key, owner, counter_);
    const std::vector<std::optional<ReleaseResult>> got =
        on_all<ReleaseResult>({request.call()}, errors, &ReleaseCommand::parse);
    std::size_t released = 0, failed = 0;
    for (auto& g : got) {
      if (!g)
        ++failed;
      else if (*g == ReleaseResult::released)
        ++released;
    }
    if (released >= quorum_) return ReleaseResult::released;
    if (failed > n - quorum_)
      errors.raise("weave redlock: release reached only " + std::to_string(n - failed) + " of " +
                   std::to_string(n) + " masters");
    return ReleaseResult::lost;
  }

  std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) override {
    const std::size_t n = masters_.size();
    if (items.empty()) return {};
    Failures errors(n);
    RenewCommand request(prefix_, items, *masters_.front(), counter_);
    const std::vector<std::optional<std::vector<RenewResult>>> got =
        on_all<std::vector<RenewResult>>(request.calls(), errors, [&](const std::vector<store::Reply>& replies) {
          return request.parse(replies);
        });
    const std::size_t failed = errors.count();
    if (failed > n - quorum_)
      errors.raise("weave redlock: renewal reached only " + std::to_string(n - failed) + " of " +
                   std::to_string(n) + " masters");
    std::vector<RenewResult> out(items.size(), RenewResult::lost);
    for (std::size_t j = 0; j < items.size(); ++j) {
      std::size_t owned = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (got[i] && (*got[i])[j] == RenewResult::owned) ++owned;
      if (owned >= quorum_) out[j] = RenewResult::owned;
    }
    return out;
  }

  // Subscribes on every master (a release on any of them wakes the waiter);
  // masters that cannot be reached are skipped as long as a majority can.
  std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) override {
    const std::size_t n = masters_.size();
    auto bell = std::make_shared<store::Bell>();
    auto pending = std::make_shared<PendingWake>();
    bell->hook = [pending] { pending->ring(); };  // set before the bell is handed to a subscription
    auto waiter = std::make_unique<Waiter>(bell, std::move(pending));
    waiter->interests.resize(n);
    Failures errors(n);
    const std::string channel = release_channel(prefix_, key);
    fan_.run(n, [&](std::size_t i) {
      try {
        waiter->interests[i] = masters_[i]->subscribe(channel, bell);
      } catch (...) {
        errors.record(i, std::current_exception());
      }
    });
    for (auto& m : masters_) waiter->keep.push_back(m);
    if (errors.count() > n - quorum_) errors.raise("weave redlock: cannot wait on a majority of masters");
    std::erase(waiter->interests, nullptr);
    return waiter;
  }

 private:
  // `calls` on every master at once; each master's replies read by `parse`,
  // or its error recorded.
  template <class T, class Parse>
  std::vector<std::optional<T>> on_all(const std::vector<store::ScriptCall>& calls, Failures& errors, Parse&& parse,
                                       std::span<store::NodeExecutor* const> nodes = {}) {
    if (nodes.empty()) nodes = nodes_;
    std::vector<store::NodeOutcome> outcomes = store::run_on_each(nodes, calls);
    std::vector<std::optional<T>> got(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (outcomes[i].error) {
        errors.record(i, outcomes[i].error);
        continue;
      }
      try {
        if constexpr (std::is_invocable_v<Parse&, const store::Reply&>)
          got[i] = parse(outcomes[i].replies.front());
        else
          got[i] = parse(outcomes[i].replies);
      } catch (...) {
        errors.record(i, std::current_exception());
      }
    }
    return got;
  }

  void release_all(std::string_view key, std::string_view owner) {
    // Unreachable masters keep their copy until the lease runs out.
    Failures ignored(masters_.size());
    ReleaseCommand request(prefix_, key, owner, counter_);
    on_all<ReleaseResult>({request.call()}, ignored, &ReleaseCommand::parse);
  }

  // Returns how many masters of the majority could not be raised.
  std::size_t raise(std::string_view key, const std::vector<std::optional<AcquireResult>>& got, std::uint64_t token,
                    milliseconds lease) {
    std::vector<store::NodeExecutor*> behind;
    for (std::size_t i = 0; i < masters_.size(); ++i)
      if (got[i] && got[i]->acquired && got[i]->fencing_token < token) behind.push_back(nodes_[i]);
    if (behind.empty()) return 0;
    RaiseFenceCommand request(prefix_, key, token, lease, counter_);
    Failures errors(behind.size());
    on_all<bool>({request.call()}, errors, [](const store::Reply& r) {
      RaiseFenceCommand::parse(r);
      return true;
    }, behind);
    return errors.count();
  }

  std::vector<std::shared_ptr<store::NodeExecutor>> masters_;
  std::vector<store::NodeExecutor*> nodes_;
  std::size_t quorum_;
  std::string prefix_;
  CounterPolicy counter_;
  store::FanOut fan_;
};

}  // namespace

std::shared_ptr<LockBackend> make_redlock_backend(const LockOptions& options) {
  std::vector<store::Endpoint> eps = store::endpoints_from(parse_store_url(options.url), store::connection_settings(options));
  std::vector<std::shared_ptr<store::NodeExecutor>> masters;
  for (auto& ep : eps) masters.push_back(std::make_shared<store::NodeExecutor>(ep, options.pool_size));
  // No clock floor: the masters' clocks differ, so it would give each master
  // another token and every acquisition would need the raise step.
  return std::make_shared<RedlockBackend>(std::move(masters), options.key_prefix,
                                          CounterPolicy::from(options, /*clock_floor=*/false));
}

}  // namespace weave::lock_redis
