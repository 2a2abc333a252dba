// core/cycle_clock.h: whether the time-stamp counter can serve, and its rate.
#include "core/cycle_clock.h"

#include <fstream>
#include <mutex>
#include <string>

#if defined(__x86_64__)
#  include <cpuid.h>
#endif

namespace WEAVE_NAMESPACE::detail::cycle_clock {

std::atomic<double> ns_per_tick{0};

namespace {

constexpr std::chrono::milliseconds kMeasureOver{20};

bool counter_usable() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8))) return false;  // no invariant TSC
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(in >> source) && source == "tsc";
#else
  return false;
#endif
}

struct Anchor {
  std::once_flag once;
  bool usable = false;
  std::int64_t ticks = 0;
  std::chrono::steady_clock::time_point at{};
};
Anchor& anchor() {
  static Anchor a;
  return a;
}

}  // namespace

bool usable() noexcept {
  Anchor& a = anchor();
  std::call_once(a.once, [&] { a.usable = counter_usable(); });
  return a.usable;
}

#if defined(__x86_64__)
namespace {
// steady_clock and the counter read together: the counter between two
// steady_clock reads less than 2 us apart (a thread preempted between them
// tries again), against their midpoint.
struct Pair {
  std::chrono::steady_clock::time_point at;
  std::int64_t ticks;
};
Pair read_together() noexcept {
  Pair best{};
  auto best_gap = std::chrono::steady_clock::duration::max();
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto before = std::chrono::steady_clock::now();
    const auto ticks = static_cast<std::int64_t>(__rdtsc());
    const auto after = std::chrono::steady_clock::now();
    if (after - before < best_gap) {
      best_gap = after - before;
      best = {before + (after - before) / 2, ticks};
    }
    if (best_gap < std::chrono::microseconds(2)) break;
  }
  return best;
}
}  // namespace
#endif

void calibrate(std::chrono::steady_clock::time_point now) noexcept {
#if defined(__x86_64__)
  if (!usable() || ns_per_tick.load(std::memory_order_relaxed) > 0) return;
  Anchor& a = anchor();
  static std::once_flag anchored;
  std::call_once(anchored, [&] {
    const Pair p = read_together();  // (its own reading: `now` may be long before the usability check)
    a.at = p.at;
    a.ticks = p.ticks;
  });
  if (now - a.at < kMeasureOver) return;
  const Pair p = read_together();
  if (p.ticks <= a.ticks) return;
  const double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(p.at - a.at).count());
  ns_per_tick.store(ns / static_cast<double>(p.ticks - a.ticks), std::memory_order_relaxed);
#else
  (void)now;
#endif
}

}  // namespace weave::detail::cycle_clock
