#include "schedule/misfire.h"

#include <algorithm>
#include <deque>

#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

using Instant = Schedule::Instant;

namespace {

// Ticks walked at most per look: a per-second cron expression over a day
// is 86,400; past this the count is a lower bound.
constexpr std::uint64_t kWalkLimit = 1'000'000;

struct Walk {
  std::deque<Instant> latest;  // the last `keep` ticks walked
  std::uint64_t count = 0;
  bool cut_short = false;  // stopped at kWalkLimit before reaching `now`
};

// The ticks in (from, now], keeping the latest `keep`.
Walk walk(const Schedule& schedule, Instant from, Instant now, std::size_t keep) {
  Walk w;
  for (std::optional<Instant> t = schedule.next(from); t && *t <= now; t = schedule.next(*t)) {
    if (w.count == kWalkLimit) {
      w.cut_short = true;
      break;
    }
    ++w.count;
    w.latest.push_back(*t);
    if (w.latest.size() > keep) w.latest.pop_front();
  }
  return w;
}

}  // namespace

DuePlan plan_due(const Schedule& schedule, std::optional<Instant> last_started, Instant now,
                 const MisfirePolicy& policy) {
  if (policy.misfire == Misfire::run_all && policy.max_catch_up == 0)
    throw UsageError("schedule: misfire=run_all needs max_catch_up of at least 1");
  // (A window twice as wide as one holding `keep` ticks is walked in full.)
  const std::size_t keep =
      policy.misfire == Misfire::run_all ? std::min<std::uint64_t>(policy.max_catch_up, kWalkLimit / 4) : 1;
  const Instant from = last_started ? *last_started : now - policy.grace;
  Walk due = walk(schedule, from, now, keep);
  const std::uint64_t count = due.count;  // (a lower bound when cut short)
  const bool cut_short = due.cut_short;
  if (cut_short) {
    // Too many to walk: the latest ticks from a window before `now`, widened
    // until it holds `keep` of them (or reaches `from`).
    for (std::chrono::milliseconds width{1000};; width *= 2) {
      const Instant start = now - from > width ? now - width : from;
      due = walk(schedule, start, now, keep);
      if (start == from || (!due.cut_short && due.latest.size() >= keep)) break;
    }
  }
  DuePlan plan;
  plan.next = schedule.next(now);
  plan.missed_at_least = cut_short;
  if (due.latest.empty()) return plan;
  const Instant latest = due.latest.back();
  if (!last_started) {  // nobody expected the ones before: the latest alone, on time by the window
    plan.run.push_back(latest);
    return plan;
  }
  switch (policy.misfire) {
    case Misfire::skip:
      if (now - latest <= policy.grace) plan.run.push_back(latest);
      break;
    case Misfire::run_once:
      plan.run.push_back(latest);
      break;
    case Misfire::run_all:
      plan.run.assign(due.latest.begin(), due.latest.end());
      break;
  }
  plan.missed = count - plan.run.size();
  return plan;
}

}  // namespace weave::detail
