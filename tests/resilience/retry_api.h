// Methods under [[retry]], woven by weavegen, for test_retry.cpp: each
// throws what `fail` says for its first `failures` runs.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>
#include <system_error>

#include "weave/error.h"

namespace resilient {

// An error of the service's own, not a weave::Error.
struct Transient : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Flaky {
 public:
  virtual ~Flaky() = default;

  // Up to 4 runs, waits capped at 5 ms then 10 ms (then 10 ms).
  [[retry(attempts=4, backoff=5ms, max_backoff=10ms)]]
  virtual int call() {
    const int run = ++runs;
    if (run <= failures) fail(run);
    return run;
  }

  // Written before the lock, and outside it by default order (-50 < 0): each
  // run takes the lock anew.
  [[retry(attempts=3, backoff=1ms, max_backoff=1ms)]]
  [[lock(key="flaky:locked")]]
  virtual int locked() {
    const int run = ++runs;
    if (run <= failures) fail(run);
    return run;
  }

  // Each run gets the caller's arguments (copied to it, never moved away).
  [[retry(attempts=3, backoff=1ms, max_backoff=1ms)]]
  virtual std::string echo(std::string text) {
    const int run = ++runs;
    std::string mine = std::move(text);  // a run that moves from its argument
    if (run <= failures) fail(run);
    return mine;
  }

  // Retries what retry_on names (and what derives from it), nothing else;
  // once its runs are spent, the fallback answers.
  [[retry(attempts=3, backoff=1ms, max_backoff=1ms, retry_on=[Transient, std::system_error], fallback=cached)]]
  virtual int picky(int failing_kind) {
    const int run = ++runs;
    if (run <= failures) {
      if (failing_kind == 0) throw Transient("transient " + std::to_string(run));
      if (failing_kind == 1) throw std::system_error(std::make_error_code(std::errc::connection_refused));
      throw weave::IoError("retryable by default, not named");
    }
    return run;
  }
  virtual int cached(int) { return -1; }

  std::atomic<int> runs{0};
  int failures = 0;
  // retryable: a weave::IoError (retryable()); else a std::runtime_error.
  bool retryable = true;

 private:
  void fail(int run) {
    if (retryable) throw weave::IoError("run " + std::to_string(run) + " failed");
    throw std::runtime_error("run " + std::to_string(run) + " failed for good");
  }
};

}  // namespace resilient
