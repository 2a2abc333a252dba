// A tiny timing harness: best-of-N repetitions of a tight loop, in ns per call,
// and the one clock the drivers time blocks and rounds with. Figures are only
// compared as ratios within one run (machines are noisy).
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace bench {

// CLOCK_MONOTONIC in ns: the clock every process on the host shares (a
// forked or exec'd worker's times compare with the driver's).
inline std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

template <class F>
double ns_per_call(long iterations, int repetitions, F&& body) {
  double best = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) body(i);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations);
  }
  return best;
}

}  // namespace bench
