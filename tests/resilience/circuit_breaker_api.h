// Methods under [[circuit_breaker]], woven by weavegen, for
// test_circuit_breaker.cpp.
#pragma once

#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

#include "weave/error.h"

namespace resilient {

class Dependency {
 public:
  virtual ~Dependency() = default;

  // The last 4 calls; open at 50 % failed of at least 4; one probe after 50 ms.
  [[circuit_breaker(name="dep:call", window_calls=4, min_calls=4, failure_rate=50%, open_for=50ms, half_open_calls=1)]]
  virtual int call(bool fail) { return run(fail); }

  // The same breaker by name; refused calls are skipped.
  [[circuit_breaker(name="dep:call", window_calls=4, min_calls=4, failure_rate=50%, open_for=50ms, half_open_calls=1,
                    on_open=skip)]]
  virtual std::optional<int> maybe(bool fail) { return run(fail); }

  // Under a retry (outside by default, -50 < -40): a refusal is not retried.
  [[retry(attempts=3, backoff=1ms, max_backoff=1ms)]]
  [[circuit_breaker(name="dep:retried", window_calls=2, min_calls=2, failure_rate=100%, open_for=10s)]]
  virtual int retried(bool fail) { return run(fail); }

  // Only a std::system_error is a failure; a std::invalid_argument (the
  // caller's mistake) counts for nothing; anything else is a success.
  [[circuit_breaker(name="dep:narrow", window_calls=2, min_calls=2, failure_rate=100%, open_for=10s,
                    record_on=std::system_error, ignore_on=[std::invalid_argument])]]
  virtual int narrow(int kind) {
    ++runs;
    if (kind == 1) throw std::system_error(std::make_error_code(std::errc::connection_refused));
    if (kind == 2) throw std::invalid_argument("bad request");
    if (kind == 3) throw std::runtime_error("not recorded");
    return 0;
  }

  // One breaker for every process using the resilience store (mem:// here:
  // this process's runtimes).
  [[circuit_breaker(name="dep:shared", window=10s, min_calls=4, failure_rate=50%, open_for=10s, shared=true)]]
  virtual int shared(bool fail) { return run(fail); }

  std::atomic<int> runs{0};

 private:
  int run(bool fail) {
    const int n = ++runs;
    if (fail) throw weave::IoError("dependency down (run " + std::to_string(n) + ")");
    return n;
  }
};

}  // namespace resilient
