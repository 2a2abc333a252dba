// The schedule bench_schedule_weave serves: every 100 ms (the bench's
// tick), each run's tick and start written to the worker's log.
#pragma once

#include <cstdio>

#include "weave/tick.h"

namespace schedulebench {

class Ticks {
 public:
  explicit Ticks(std::FILE* log) : log_(log) {}
  virtual ~Ticks() = default;
  [[scheduled(every=100ms, name="bench-tick")]]
  virtual void tick();

 private:
  std::FILE* log_;
};

}  // namespace schedulebench
