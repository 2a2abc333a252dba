// Methods under [[timeout]], woven by weavegen, for test_timeout.cpp: each
// works `steps` milliseconds, one at a time, looking at its stop token
// between them when `cooperative`.
#pragma once

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "weave/call_context.h"
#include "weave/error.h"

namespace resilient {

class Slow {
 public:
  virtual ~Slow() = default;

  // The steps it worked.
  [[timeout(after=40ms)]]
  virtual int work(int steps) { return run(steps); }

  // Works, then throws.
  [[timeout(after=40ms)]]
  virtual void work_then_throw(int steps) {
    run(steps);
    throw std::runtime_error("failed after " + std::to_string(steps) + " steps");
  }

  // Inside a lock (order: the timeout, -20, is outside the lock, 0): the
  // call's token is the deadline's and the lease's.
  [[timeout(after=40ms)]]
  [[lock(key="slow:locked")]]
  virtual int locked(int steps) { return run(steps); }

  // Each run has its own deadline (the retry, -50, is outside): the first
  // runs are slow and throw once stopped, then they are quick.
  [[retry(attempts=3, backoff=1ms, max_backoff=1ms)]]
  [[timeout(after=30ms)]]
  virtual int retried() {
    const int run_number = ++runs;
    if (run_number <= slow_runs) {
      run(1000);
      throw std::runtime_error("stopped at the deadline");
    }
    return run_number;
  }

  // The same, but a slow run returns (late) instead of throwing.
  [[retry(attempts=3, backoff=1ms, max_backoff=1ms)]]
  [[timeout(after=30ms)]]
  virtual int returns_late() {
    const int run_number = ++runs;
    run(run_number <= slow_runs ? 1000 : 0);
    return run_number;
  }

  bool cooperative = true;
  std::atomic<bool> saw_stop{false};
  std::atomic<int> runs{0};
  int slow_runs = 0;

 private:
  int run(int steps) {
    int done = 0;
    for (; done < steps; ++done) {
      if (weave::current_stop_token().stop_requested()) {
        saw_stop = true;
        if (cooperative) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done;
  }
};

}  // namespace resilient
