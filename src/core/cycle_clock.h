// A cheaper clock for timing a call on its hot path (a [[timeout]]'s
// start): the CPU's time-stamp counter, about 9 ns a read on this VM where
// steady_clock::now() takes 21, used only once it is known to keep
// steady_clock's pace:
//   - on x86-64 with an invariant counter, when the kernel keeps time by it
//     (its clocksource is "tsc": it found the counters in step across CPUs);
//   - once its rate against steady_clock was measured over 20 ms or more
//     (each end a counter read between two steady_clock reads: within about
//     50 ppm, a 10 s deadline within half a millisecond).
// Until then (and elsewhere) ready_ticks() answers 0 and the caller reads
// steady_clock, handing the reading to calibrate(): a short-lived process
// never uses the counter.
//
//   if (const std::int64_t t0 = cycle_clock::ready_ticks()) {
//     ... cycle_clock::ns_between(t0, cycle_clock::ready_ticks()) ...
//   } else {
//     const auto now = std::chrono::steady_clock::now();
//     cycle_clock::calibrate(now);
//   }
#pragma once

#include "weave/abi.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#  include <x86intrin.h>
#endif

namespace WEAVE_NAMESPACE::detail::cycle_clock {

// ns per counter tick once measured; 0 until then (and where unusable).
extern std::atomic<double> ns_per_tick;

// The counter now, or 0 while it is not ready.
inline std::int64_t ready_ticks() noexcept {
#if defined(__x86_64__)
  if (ns_per_tick.load(std::memory_order_relaxed) > 0) return static_cast<std::int64_t>(__rdtsc());
#endif
  return 0;
}

// ns between two readings of the ready counter.
inline std::int64_t ns_between(std::int64_t from, std::int64_t to) noexcept {
  return static_cast<std::int64_t>(static_cast<double>(to - from) * ns_per_tick.load(std::memory_order_relaxed));
}

// A steady_clock reading a caller made anyway: the first one anchors the
// measurement (and decides whether the counter is usable at all), one 20
// ms or more later finishes it.
void calibrate(std::chrono::steady_clock::time_point now) noexcept;

// Whether this machine's counter can serve (tests).
bool usable() noexcept;

}  // namespace weave::detail::cycle_clock
