// Asynchronous methods under [[semaphore]], woven by weavegen, for the
// asynchronous semaphore suite (test_async_semaphore.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "weave/asio.h"

namespace asyncquotas {

class Exports {
 public:
  virtual ~Exports() = default;

  // At most 2 of a tenant at once; a caller waits (suspended) up to 20 s.
  // The body holds its permit across a timer of `ms`.
  [[semaphore(key="export:<tenant>", permits=2, wait=20s)]]
  virtual weave::net::awaitable<int> run(std::string tenant, long ms) {
    (void)tenant;
    const int now = ++inside;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(weave::net::use_awaitable);
    --inside;
    ++runs;
    co_return now;
  }

  std::atomic<int> runs{0}, inside{0}, most{0};
};

}  // namespace asyncquotas
