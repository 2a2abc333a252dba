// Asynchronous methods under [[bulkhead]], woven by weavegen, for
// test_async_bulkhead.cpp.
#pragma once

#include <atomic>
#include <chrono>

#include "weave/asio.h"

namespace asyncresilient {

class Api {
 public:
  virtual ~Api() = default;

  // One at once; the others wait (suspended) up to 10 s. Each call holds its
  // slot for `hold` on a timer.
  [[bulkhead(max=1, wait=10s)]]
  virtual weave::net::awaitable<long> work(std::chrono::milliseconds hold) {
    const long now = ++inside;
    if (now > most) most = now;
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, hold);
    co_await t.async_wait(weave::net::use_awaitable);
    --inside;
    co_return ++runs;
  }

  std::atomic<long> inside{0}, most{0}, runs{0};
};

}  // namespace asyncresilient
