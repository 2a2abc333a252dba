// The schedules tick_worker serves (weavegen weaves them), each start and
// end of a run appended to a log: Ticker every 250 ms, its tick's first
// attempt working for a while (keeping its lease) so a test can SIGKILL or
// SIGSTOP the worker mid-run; ParisTwoOClock every 5 s of Paris's 2 o'clock
// hour, which the clocks skip in March and show twice in October.
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

class ParisTwoOClock {
 public:
  explicit ParisTwoOClock(int log_fd) : fd_(log_fd) {}
  virtual ~ParisTwoOClock() = default;

  [[scheduled(cron="*/5 * 2 * * *", zone="Europe/Paris", name="paris-two")]]
  virtual void run(const weave::Tick& tick);

 private:
  int fd_;
};

}  // namespace scheduletest
