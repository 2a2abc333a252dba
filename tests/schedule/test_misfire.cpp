// detail::plan_due: the ticks a worker starts, and those it counts missed,
// per misfire policy. Expected ticks are worked out by hand from the
// schedules written next to each row (a fixed period from a round anchor;
// Paris's 2026 spring-forward: 02:00 CET = 01:00Z becomes 03:00 CEST).
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "schedule/misfire.h"
#include "time_text.h"

using weave::UsageError;
using weave::detail::DuePlan;
using weave::detail::Misfire;
using weave::detail::MisfirePolicy;
using weave::detail::plan_due;
using weave::detail::Schedule;
using namespace std::chrono;
using Instant = Schedule::Instant;

namespace {

const auto at = schedule_test::instant_at;

std::vector<std::string> texts(const std::vector<Instant>& ticks) {
  std::vector<std::string> out;
  for (Instant t : ticks) out.push_back(schedule_test::text_of(t));
  return out;
}

// Every 10 s from midnight (no REQUIRE before a test runs: not at()).
const Schedule every_10s = Schedule::every(10s, Instant(sys_days(2026y / June / 1)));

struct Row {
  const char* what;
  std::optional<std::string> last_started;
  std::string now;
  MisfirePolicy policy;
  std::vector<std::string> run;
  std::uint64_t missed;
};

}  // namespace

TEST_CASE("misfire: the ticks due since the last start, per policy", "[schedule][misfire]") {
  const auto skip = MisfirePolicy{.misfire = Misfire::skip, .max_catch_up = 1, .grace = 1s};
  const auto once = MisfirePolicy{.misfire = Misfire::run_once, .max_catch_up = 1, .grace = 1s};
  const auto all10 = MisfirePolicy{.misfire = Misfire::run_all, .max_catch_up = 10, .grace = 1s};
  const auto all2 = MisfirePolicy{.misfire = Misfire::run_all, .max_catch_up = 2, .grace = 1s};
  const auto all10_wide = MisfirePolicy{.misfire = Misfire::run_all, .max_catch_up = 10, .grace = 15s};
  const Row rows[] = {
      // 00:00:40 is due, 0.5 s ago: on time under every policy.
      {"on time, skip", "2026-06-01T00:00:30Z", "2026-06-01T00:00:40Z", skip, {"2026-06-01T00:00:40Z"}, 0},
      {"on time, run_all", "2026-06-01T00:00:30Z", "2026-06-01T00:00:40Z", all10, {"2026-06-01T00:00:40Z"}, 0},
      // Nothing due since the last start.
      {"nothing due", "2026-06-01T00:00:40Z", "2026-06-01T00:00:49Z", skip, {}, 0},
      // 00:00:40, :50 and 00:01:00 are due; the latest is 5 s late (grace 1 s).
      {"late, skip: none", "2026-06-01T00:00:30Z", "2026-06-01T00:01:05Z", skip, {}, 3},
      {"late, run_once: the latest", "2026-06-01T00:00:30Z", "2026-06-01T00:01:05Z", once, {"2026-06-01T00:01:00Z"}, 2},
      {"late, run_all: each",
       "2026-06-01T00:00:30Z",
       "2026-06-01T00:01:05Z",
       all10,
       {"2026-06-01T00:00:40Z", "2026-06-01T00:00:50Z", "2026-06-01T00:01:00Z"},
       0},
      {"late, run_all bounded: the latest two",
       "2026-06-01T00:00:30Z",
       "2026-06-01T00:01:05Z",
       all2,
       {"2026-06-01T00:00:50Z", "2026-06-01T00:01:00Z"},
       1},
      // An hour down: 360 ticks due (00:00:40 ... 01:00:30).
      {"an hour down, run_once", "2026-06-01T00:00:30Z", "2026-06-01T01:00:30Z", once, {"2026-06-01T01:00:30Z"}, 359},
      {"an hour down, skip: the latest is on time",
       "2026-06-01T00:00:30Z",
       "2026-06-01T01:00:30Z",
       skip,
       {"2026-06-01T01:00:30Z"},
       359},
      // None started yet: nothing expected before now - grace.
      {"new schedule, a tick within grace", std::nullopt, "2026-06-01T00:00:40Z", skip, {"2026-06-01T00:00:40Z"}, 0},
      {"new schedule, between ticks", std::nullopt, "2026-06-01T00:00:45Z", all10, {}, 0},
      {"new schedule, two ticks within grace: the latest alone", std::nullopt, "2026-06-01T00:00:50Z", all10_wide,
       {"2026-06-01T00:00:50Z"}, 0},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    // A look at `now` + 0.5 s for the rows whose tick is due just now (still on time).
    Instant now = at(row.now);
    if (now == at("2026-06-01T00:00:40Z")) now += 500ms;
    const DuePlan plan =
        plan_due(every_10s, row.last_started ? std::optional<Instant>(at(*row.last_started)) : std::nullopt, now,
                 row.policy);
    CHECK(texts(plan.run) == row.run);
    CHECK(plan.missed == row.missed);
    CHECK_FALSE(plan.missed_at_least);
    REQUIRE(plan.next);
    CHECK(*plan.next == every_10s.next(now));
  }
}

TEST_CASE("misfire: a civil time the clocks skip is no tick, so it is not missed either", "[schedule][misfire]") {
  // 02:30 in Paris: 2026-03-28 at 01:30Z (CET), none on the 29th (the clocks
  // go from 02:00 to 03:00), 2026-03-30 at 00:30Z (CEST). A worker back on
  // the 30th at 01:00Z finds one tick due, 30 min late.
  const Schedule nightly = Schedule::cron("0 30 2 * * *", "Europe/Paris");
  const auto last = std::optional<Instant>(at("2026-03-28T01:30:00Z"));
  const Instant now = at("2026-03-30T01:00:00Z");
  const DuePlan skipped = plan_due(nightly, last, now, {.misfire = Misfire::skip, .max_catch_up = 1, .grace = 1min});
  CHECK(skipped.run.empty());
  CHECK(skipped.missed == 1);
  const DuePlan caught_up =
      plan_due(nightly, last, now, {.misfire = Misfire::run_all, .max_catch_up = 5, .grace = 1min});
  CHECK(texts(caught_up.run) == std::vector<std::string>{"2026-03-30T00:30:00Z"});
  CHECK(caught_up.missed == 0);
  REQUIRE(caught_up.next);
  CHECK(schedule_test::text_of(*caught_up.next) == "2026-03-31T00:30:00Z");
}

TEST_CASE("misfire: after an outage too long to walk, the missed count is a lower bound and the latest ticks still run", "[schedule][misfire]") {
  // Every millisecond for 30 minutes: 1,800,000 ticks due, more than one look walks.
  const Schedule every_ms = Schedule::every(1ms, at("2026-06-01T00:00:00Z"));
  const auto last = std::optional<Instant>(at("2026-06-01T00:00:00Z"));
  const Instant now = at("2026-06-01T00:30:00Z");
  const DuePlan plan = plan_due(every_ms, last, now, {.misfire = Misfire::run_all, .max_catch_up = 3, .grace = 0ms});
  CHECK(plan.missed_at_least);
  CHECK(plan.missed >= 900'000);
  REQUIRE(plan.run.size() == 3);
  CHECK(plan.run[0] == now - 2ms);
  CHECK(plan.run[1] == now - 1ms);
  CHECK(plan.run[2] == now);
}

TEST_CASE("misfire: run_all with max_catch_up 0 is a usage error", "[schedule][misfire]") {
  CHECK_THROWS_AS(plan_due(every_10s, std::nullopt, at("2026-06-01T00:00:40Z"),
                           {.misfire = Misfire::run_all, .max_catch_up = 0, .grace = 1s}),
                  UsageError);
}
