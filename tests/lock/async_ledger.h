// A service with asynchronous [[lock]] methods, woven by weavegen, for the
// asynchronous lock suite (test_async_lock.cpp). Every body suspends while it
// holds the lock and reports to its Probe: how many bodies run at once on a
// key, the fencing tokens in order, what it saw of its lease.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "weave/asio.h"
#include "weave/lease.h"

namespace asynclock {

struct Declined : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Probe {
  std::atomic<int> inside{0}, most_inside{0}, entered{0}, exited{0};
  std::atomic<int> wrong_lease{0};         // a body that did not find its own lease in its context
  std::atomic<int> fence_out_of_order{0};  // a holder whose token was not above the previous holder's
  std::mutex mutex;
  std::uint64_t last_fence = 0;

  void enter(const std::string& key) {
    const int now = ++inside;
    for (int m = most_inside.load(); now > m && !most_inside.compare_exchange_weak(m, now);) {
    }
    ++entered;
    const weave::Lease* l = weave::current_lease(key);
    if (!l) {
      ++wrong_lease;
      return;
    }
    std::lock_guard g(mutex);
    if (l->fencing_token() <= last_fence) ++fence_out_of_order;
    last_fence = l->fencing_token();
  }
  void check(const std::string& key) {
    if (!weave::current_lease(key)) ++wrong_lease;
  }
  void exit() {
    --inside;
    ++exited;
  }
};

inline weave::net::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  const auto ex = co_await weave::net::this_coro::executor;  // (a named executor: g++ 12 destroys a co_await expression's temporaries twice)
  weave::net::steady_timer t(ex, d);
  co_await t.async_wait(weave::net::use_awaitable);
}

class Ledger {
 public:
  explicit Ledger(Probe* probe = nullptr) : probe_(probe) {}
  virtual ~Ledger() = default;

  // Holds the lock across `hold_ms` of suspension (0: one trip through the
  // executor), then answers the account's total. (A long ttl: under the
  // sanitizers 10,000 calls spawned at once queue a holder's resumption for
  // seconds, which a short lease would not survive.)
  [[lock(key="acct:<id>", ttl=2min, wait=10min)]]
  virtual weave::net::awaitable<long> add(std::string id, int cents, int hold_ms) {
    const std::string key = "acct:" + id;
    probe_->enter(key);
    if (hold_ms > 0)
      co_await sleep_for(std::chrono::milliseconds(hold_ms));
    else
      co_await sleep_for(std::chrono::milliseconds(0));
    probe_->check(key);
    total_ += cents;
    const long t = total_;
    probe_->exit();
    co_return t;
  }

  // The same with a lease the watchdog renews.
  [[lock(key="acct:<id>", wait=60s)]]
  virtual weave::net::awaitable<long> add_renewed(std::string id, int hold_ms) {
    const std::string key = "acct:" + id;
    probe_->enter(key);
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    probe_->check(key);
    probe_->exit();
    co_return ++total_;
  }

  // Holds a renewed lease across `hold_ms` and touches nothing shared (for
  // many keys at once).
  [[lock(key="acct:<id>", wait=60s)]]
  virtual weave::net::awaitable<long> hold_renewed([[maybe_unused]] std::string id, int hold_ms) {
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    co_return hold_ms;
  }

  // Holds a renewed lease across one turn of its executor (a post), then
  // returns; yielding() from the moment it posts.
  [[lock(key="acct:<id>", wait=10s)]]
  virtual weave::net::awaitable<long> yield_once([[maybe_unused]] std::string id) {
    const auto ex = co_await weave::net::this_coro::executor;
    yielding_ = true;
    co_await weave::net::post(ex, weave::net::use_awaitable);
    co_return 1;
  }

  // Returns normally once its fixed-ttl lease ran out: a handler of the call
  // waits for the loss while the body is suspended on a post, and the body
  // resumes from that post (which no cancellation can reach) with the loss
  // heard and the call's cancellation emitted.
  [[lock(key="acct:<id>", ttl=300ms)]]
  virtual weave::net::awaitable<long> outlive_lease([[maybe_unused]] std::string id) {
    const auto ex = co_await weave::net::this_coro::executor;
    const weave::Lease* lease = weave::current_lease();
    weave::net::post(ex, [lease] {
      while (!lease->lost()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    co_await weave::net::post(ex, weave::net::use_awaitable);
    co_return 1;
  }

  // Does not wait, then holds the key across `hold_ms` of suspension.
  [[lock(key="acct:<id>", wait=0s)]]
  virtual weave::net::awaitable<long> hold_no_wait(std::string id, int hold_ms) {
    const std::string key = "acct:" + id;
    probe_->enter(key);
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    probe_->check(key);
    probe_->exit();
    co_return 1;
  }

  // Does not wait: std::nullopt when the key is busy.
  [[lock(key="acct:<id>", wait=0s, on_busy=skip)]]
  virtual weave::net::awaitable<std::optional<long>> try_add([[maybe_unused]] std::string id) {
    co_return ++total_;
  }

  // Holds the key and, after a suspension, calls add() on the same key: the
  // nested call re-enters this call's lease.
  [[lock(key="acct:<id>", ttl=5s, wait=10s)]]
  virtual weave::net::awaitable<long> transfer(std::string id) {
    co_await sleep_for(std::chrono::milliseconds(1));
    co_return co_await add(id, 100, 1);
  }

  // Throws from the body after a suspension.
  [[lock(key="acct:<id>", ttl=5s, wait=10s)]]
  virtual weave::net::awaitable<long> decline(std::string id) {
    co_await sleep_for(std::chrono::milliseconds(1));
    throw Declined("declined: " + id);
  }

  // A lease of `ttl=300ms` held for `hold_ms`: lost when it runs out.
  [[lock(key="acct:<id>", ttl=300ms, wait=10s)]]
  virtual weave::net::awaitable<long> overstay([[maybe_unused]] std::string id, int hold_ms) {
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    ++after_loss_;
    co_return 0;
  }

  // Outlives its `ttl=300ms` lease before its first suspension (it blocks
  // its thread for `block_ms`), then suspends for `hold_ms`: the loss must
  // cancel that suspension.
  [[lock(key="acct:<id>", ttl=300ms, wait=10s)]]
  virtual weave::net::awaitable<long> overstay_before_suspending([[maybe_unused]] std::string id, int block_ms,
                                                                 int hold_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(block_ms));
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    ++after_loss_;
    co_return 0;
  }

  // Re-enters its own lease through add() (whose call listens for the
  // lease's loss too, then ends), then outlives its `ttl=300ms` lease: the
  // loss must still cancel this body.
  [[lock(key="acct:<id>", ttl=300ms, wait=10s)]]
  virtual weave::net::awaitable<long> overstay_after_nested(std::string id, int hold_ms) {
    co_await add(id, 1, 1);
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    ++after_loss_;
    co_return 0;
  }

  long total() const { return total_; }
  int after_loss() const { return after_loss_; }
  bool yielding() const { return yielding_; }

 private:
  Probe* probe_;
  long total_ = 0;  // guarded by the lock
  std::atomic<int> after_loss_{0};
  std::atomic<bool> yielding_{false};
};

}  // namespace asynclock
