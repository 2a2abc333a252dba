// Which ticks of a schedule to start when a worker looks at the store's
// clock: the ticks due since the last one started, and what the misfire
// policy makes of those nobody started on time (no worker was alive, or
// every one was busy). Decided from instants alone, so every store and
// every worker decides alike.
//
//   const DuePlan plan = plan_due(schedule, last_started, store_now,
//                                 {.misfire = Misfire::run_once, .max_catch_up = 10, .grace = 1s});
//   for (Schedule::Instant tick : plan.run) ... claim the tick in the store, run it ...
//   missed_ticks += plan.missed;   // counted and shown, never silently dropped
//   ... then sleep until plan.next (on the store's clock) ...
//
// A tick is on time while at most `grace` has passed since it; the ticks
// before the latest due one were missed whatever the policy says of them:
//   skip      starts the latest due tick if it is on time, else none;
//   run_once  starts the latest due tick, late or not: one run for the lot;
//   run_all   starts each due tick, oldest first, at most `max_catch_up`
//             of them (the latest ones).
// Every due tick not started counts in `missed`. A schedule with no tick
// started yet expects nothing before now - grace: it starts with the latest
// tick since then (if any), whatever the policy, and has missed none.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "schedule/schedule.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// In the vocabulary's order (annotations/: misfire = skip | run_once | run_all).
enum class Misfire : std::uint8_t { skip, run_once, run_all };

// The annotation's values (its defaults come from the vocabulary).
struct MisfirePolicy {
  Misfire misfire = Misfire::skip;
  std::uint32_t max_catch_up = 1;      // run_all: at least 1 (more than 250,000 count as 250,000)
  std::chrono::milliseconds grace{0};  // how late a tick may start and still be on time
};

struct DuePlan {
  std::vector<Schedule::Instant> run;  // to start now, oldest first
  // Due ticks not started. With `missed_at_least`, more than could be
  // walked (a frequent schedule after a long outage): at least this many.
  std::uint64_t missed = 0;
  bool missed_at_least = false;
  std::optional<Schedule::Instant> next;  // the first tick after `now`, if any
};

// The ticks due in (last_started, now] (in (now - grace, now] with none
// started yet), planned per `policy`. Throws UsageError for a run_all policy
// with max_catch_up 0.
DuePlan plan_due(const Schedule& schedule, std::optional<Schedule::Instant> last_started, Schedule::Instant now,
                 const MisfirePolicy& policy);

}  // namespace weave::detail
