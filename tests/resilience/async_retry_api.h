// Asynchronous methods under [[retry]], woven by weavegen, for
// test_async_retry.cpp.
#pragma once

#include <atomic>
#include <string>

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

  std::atomic<long> runs{0};
  long failures = 0;
};

}  // namespace asyncresilient
