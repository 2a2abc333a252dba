// The cycle clock (src/core/cycle_clock.h): not ready until its rate was
// measured over 20 ms, then the counter, which measures an interval as
// steady_clock does.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/cycle_clock.h"

using namespace std::chrono_literals;
namespace cycle_clock = weave::detail::cycle_clock;

namespace {
// Readies the clock where it can serve: true when it did.
bool ready_it() {
  cycle_clock::calibrate(std::chrono::steady_clock::now());
  std::this_thread::sleep_for(25ms);
  cycle_clock::calibrate(std::chrono::steady_clock::now());
  return cycle_clock::ready_ticks() != 0;
}
}  // namespace

TEST_CASE("cycle clock: ready once measured where the kernel keeps time by the counter, and measuring as steady_clock does") {
  REQUIRE(ready_it() == cycle_clock::usable());
  if (!cycle_clock::usable()) return;  // (elsewhere every caller reads steady_clock)
  for (const auto interval : {1ms, 30ms}) {
    const auto s0 = std::chrono::steady_clock::now();
    const std::int64_t t0 = cycle_clock::ready_ticks();
    std::this_thread::sleep_for(interval);
    const std::int64_t t1 = cycle_clock::ready_ticks();
    const auto s1 = std::chrono::steady_clock::now();
    const std::int64_t by_steady = std::chrono::duration_cast<std::chrono::nanoseconds>(s1 - s0).count();
    const std::int64_t by_counter = cycle_clock::ns_between(t0, t1);
    INFO("steady " << by_steady << " ns, counter " << by_counter << " ns");
    CHECK(std::llabs(by_steady - by_counter) < 20'000 + by_steady / 200);  // (the reads' order) and 0.5 %
  }
}
