// A service with asynchronous [[dedupe]] methods, woven by weavegen, for the
// asynchronous dedupe suite (test_async_dedupe.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#include "weave/asio.h"
#include "weave/dedupe.h"

namespace asyncdedupe {

struct Declined : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline weave::net::awaitable<void> sleep_for(std::chrono::milliseconds d) {
  const auto ex = co_await weave::net::this_coro::executor;  // (named: g++ 12, docs/async.md)
  weave::net::steady_timer t(ex, d);
  co_await t.async_wait(weave::net::use_awaitable);
}

class Payments {
 public:
  virtual ~Payments() = default;

  // Runs once per key for a minute; duplicates wait for a running first call
  // (suspended) and get its result again.
  [[dedupe(key="pay:<key>", window=1min, on_duplicate=replay, wait=10s)]]
  virtual weave::net::awaitable<long> pay(std::string key, int cents, int hold_ms) {
    ++runs_;
    co_await sleep_for(std::chrono::milliseconds(hold_ms));
    if (!weave::current_dedupe_claim("pay:" + key)) ++claim_missing_;  // its claim, after a suspension
    if (cents < 0) throw Declined("declined: " + key);
    co_return 2L * cents;
  }

  // Runs `last_turn` as a handler of the call while the body waits on a post
  // (which no cancellation reaches), then returns: what the handler does
  // happens after the body's last operation completed.
  [[dedupe(key="pay:<key>", window=1min, on_duplicate=replay, wait=10s)]]
  virtual weave::net::awaitable<long> pay_past([[maybe_unused]] std::string key, int cents) {
    ++runs_;
    const auto ex = co_await weave::net::this_coro::executor;
    weave::net::post(ex, [this] { last_turn(); });
    co_await weave::net::post(ex, weave::net::use_awaitable);
    co_return 2L * cents;
  }
  std::function<void()> last_turn = [] {};

  int runs() const { return runs_; }
  int claim_missing() const { return claim_missing_; }

 private:
  std::atomic<int> runs_{0}, claim_missing_{0};
};

}  // namespace asyncdedupe
