// Asynchronous methods under [[timeout]], woven by weavegen, for
// test_async_timeout.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <stdexcept>

#include "weave/asio.h"

namespace asyncresilient {

class Sleepy {
 public:
  virtual ~Sleepy() = default;

  // Waits `ms` on a timer, then returns it.
  [[timeout(after=100ms)]]
  virtual weave::net::awaitable<int> sleep(int ms) {
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
    try {
      co_await t.async_wait(weave::net::use_awaitable);
    } catch (const weave::net::system_error& e) {
      if (e.code() == weave::net::error::operation_aborted) aborted = true;
      throw;
    }
    co_return ms;
  }

  // The same with a 5 ms deadline.
  [[timeout(after=5ms)]]
  virtual weave::net::awaitable<int> nap(int ms) {
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(weave::net::use_awaitable);
    co_return ms;
  }

  // Under a far deadline, a nested woven call with a near one (and a lock,
  // which finds the caller's context through the deadline's strand).
  [[timeout(after=10s)]]
  virtual weave::net::awaitable<int> outer(int ms) { co_return co_await inner(ms); }
  [[timeout(after=20ms)]]
  [[lock(key="async:timeout:inner")]]
  virtual weave::net::awaitable<int> inner(int ms) {
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(weave::net::use_awaitable);
    co_return ms;
  }

  // Returns at once, with 10 s to spare.
  [[timeout(after=10s)]]
  virtual weave::net::awaitable<int> quick(int n) { co_return n; }

  // Throws at once.
  [[timeout(after=100ms)]]
  virtual weave::net::awaitable<int> fail() {
    throw std::runtime_error("failed in time");
    co_return 0;
  }

  std::atomic<bool> aborted{false};
};

}  // namespace asyncresilient
