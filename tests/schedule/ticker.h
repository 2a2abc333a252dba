// The schedule tick_worker serves (weavegen weaves it): every 250 ms, each
// start and end of a run appended to a log, and the tick's first attempt
// working for TICK_WORKER_SLOW_MS (0 by default) while it keeps its lease,
// so a test can SIGKILL or SIGSTOP the worker mid-run.
#pragma once

#include <string>

#include "weave/tick.h"

namespace scheduletest {

class Ticker {
 public:
  Ticker(int log_fd, int slow_first_ms) : fd_(log_fd), slow_first_ms_(slow_first_ms) {}
  virtual ~Ticker() = default;

  [[scheduled(every=250ms, retries=100, backoff=20ms, backoff_cap=20ms, name="ticker")]]
  virtual void tick();

 private:
  int fd_;
  int slow_first_ms_;
};

}  // namespace scheduletest
