// An asynchronous method under [[circuit_breaker]], woven by weavegen, for
// test_async_circuit_breaker.cpp.
#pragma once

#include <atomic>
#include <chrono>

#include "weave/asio.h"
#include "weave/error.h"

namespace asyncresilient {

class Dependency {
 public:
  virtual ~Dependency() = default;

  // Fails when `fail`; waits `ms` on a timer first.
  [[circuit_breaker(name="async:dep", window_calls=2, min_calls=2, failure_rate=100%, open_for=10s)]]
  virtual weave::net::awaitable<int> call(bool fail, int ms) {
    if (ms > 0) {
      weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
      co_await t.async_wait(weave::net::use_awaitable);
    }
    const int n = ++runs;
    if (fail) throw weave::IoError("dependency down");
    co_return n;
  }

  // One breaker for every process using the resilience store (mem:// here).
  [[circuit_breaker(name="async:shared", window=10s, min_calls=2, failure_rate=100%, open_for=10s, shared=true)]]
  virtual weave::net::awaitable<int> shared(bool fail) {
    const int n = ++runs;
    if (fail) throw weave::IoError("dependency down");
    co_return n;
  }

  std::atomic<int> runs{0};
};

}  // namespace asyncresilient
