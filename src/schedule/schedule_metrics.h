// weave_schedule_* of one schedule (docs/operations.md), for the whole
// process: written by the schedule worker, exported by schedule_metrics.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "core/metrics.h"
#include "core/striped.h"

namespace WEAVE_NAMESPACE::detail {

struct alignas(64) ScheduleCountStripe {
  std::atomic<std::uint64_t> ran{0}, failed{0}, not_run{0}, missed{0};
};
struct ScheduleSeries {
  StripedCounters<ScheduleCountStripe> counts;
  DurationHistogram lateness;  // tick time to its first attempt's start, by the store's clock
};
ScheduleSeries& schedule_series(std::string_view name);

}  // namespace weave::detail
