// The service bench_async_lock weaves: the same [[lock]] on a synchronous
// method and on an asynchronous one, an asynchronous one under a no-op
// asynchronous interceptor (the chain's own cost), and an asynchronous one
// that holds its lock across a suspension (for the contended run).
#pragma once

#include <atomic>
#include "weave/asio.h"
#include <chrono>
#include <string>

class Accounts {
 public:
  virtual ~Accounts() = default;

  [[lock(key="bench:sync:<id>", ttl=10s)]]
  virtual long add_sync([[maybe_unused]] std::string id) { return ++count_; }

  [[lock(key="bench:async:<id>", ttl=10s)]]
  virtual weave::net::awaitable<long> add([[maybe_unused]] std::string id) { co_return ++count_; }

  // The chain's own cost: one asynchronous interceptor that only proceeds.
  [[noop]]
  virtual weave::net::awaitable<long> touch([[maybe_unused]] std::string id) { co_return ++count_; }

  // Holds the lock for `us` microseconds of suspension.
  [[lock(key="bench:held:<id>", ttl=10s, wait=10min)]]
  virtual weave::net::awaitable<long> hold([[maybe_unused]] std::string id, int us) {
    const auto ex = co_await weave::net::this_coro::executor;
    weave::net::steady_timer t(ex, std::chrono::microseconds(us));
    co_await t.async_wait(weave::net::use_awaitable);
    co_return ++count_;
  }

 private:
  std::atomic<long> count_{0};
};
