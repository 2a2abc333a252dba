// Asynchronous methods under [[retry]], woven by weavegen, for
// test_async_retry.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <system_error>

#include "weave/asio.h"
#include "weave/error.h"

namespace asyncresilient {

class Flaky {
 public:
  virtual ~Flaky() = default;

  // Up to 5 runs; waits capped at 50 ms, then 100 ms.
  [[retry(attempts=5, backoff=50ms, max_backoff=100ms)]]
  virtual weave::net::awaitable<long> call() {
    const long run = ++runs;
    if (run <= failures) throw weave::IoError("run " + std::to_string(run) + " failed");
    co_return run;
  }

  // Retries std::system_error (operation_aborted is one), inside a lock
  // whose interceptor resets the cancellation state: a cancelled call is
  // still never run again.
  [[retry(attempts=5, backoff=1ms, max_backoff=1ms, retry_on=[std::system_error])]]
  [[lock(key="async:retry:locked")]]
  virtual weave::net::awaitable<long> locked_wait(int ms) {
    const long run = ++runs;
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(weave::net::use_awaitable);
    co_return run;
  }

  std::atomic<long> runs{0};
  long failures = 0;
};

}  // namespace asyncresilient
