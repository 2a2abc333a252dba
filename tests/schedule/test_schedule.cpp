// detail::Schedule: cron expressions in real time zones of the system's tz
// database (daylight-saving gaps and repeated hours, a zone that changed its
// offset, a day a zone skipped, the rules after the database's last listed
// change), fixed periods from an anchor, and unknown zones. Every expected
// instant was worked out by hand from the zone's UTC offsets, written next to
// it, and checked with Python's zoneinfo (civil time and offset of each
// instant; the instants showing each skipped or repeated civil time).
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "schedule/schedule.h"
#include "time_text.h"

using weave::UsageError;
using weave::detail::CronError;
using weave::detail::is_known_time_zone;
using weave::detail::Schedule;
using weave::detail::UnknownTimeZoneError;
using namespace std::chrono;
using Instant = Schedule::Instant;

namespace {

const auto at = schedule_test::instant_at;
using schedule_test::text_of;

// The runs after `after` in turn, as text: at most `count`, fewer when the schedule ends.
std::vector<std::string> walk(const Schedule& schedule, Instant after, std::size_t count) {
  std::vector<std::string> runs;
  while (runs.size() < count) {
    const auto run = schedule.next(after);
    if (!run) break;
    runs.push_back(text_of(*run));
    after = *run;
  }
  return runs;
}

struct ZonedTicks {
  const char* zone;
  const char* expression;
  const char* after;               // UTC
  std::vector<std::string> runs;  // UTC, in turn; fewer than 3: the schedule ends
};

// Offsets: Europe/Paris CET +1, CEST +2, changes at 01:00 UTC on March's and
// October's last Sundays; America/New_York EST -5, EDT -4, changes at 02:00
// local on March's second and November's first Sundays; Australia/Lord_Howe
// +10:30, +11 in summer, changes by half an hour at 02:00 local on April's
// and October's first Sundays.
const std::vector<ZonedTicks> kZonedTicks = {
    // UTC, by "" and by name
    {"", "0 0 12 * * *", "2026-03-29T00:00:00Z", {"2026-03-29T12:00:00Z", "2026-03-30T12:00:00Z", "2026-03-31T12:00:00Z"}},
    {"UTC", "0 30 2 * * *", "2026-03-28T12:00:00Z", {"2026-03-29T02:30:00Z", "2026-03-30T02:30:00Z", "2026-03-31T02:30:00Z"}},
    {"Etc/UTC", "0 0 0 1 * *", "2026-01-15T00:00:00Z", {"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"}},

    // Paris, spring forward on 2026-03-29: 02:00 CET is 03:00 CEST, 02:00-02:59 never shows.
    // 02:30 daily: the 28th at 02:30 CET, the 29th has none, then 02:30 CEST.
    {"Europe/Paris", "0 30 2 * * *", "2026-03-27T12:00:00Z", {"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"}},
    // every half hour from 01:00 CET: 01:30 CET, (02:00, 02:30 skipped), 03:00 CEST, 03:30 CEST
    {"Europe/Paris", "0 */30 * * * *", "2026-03-29T00:00:00Z", {"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}},

    // Paris, fall back on 2026-10-25: 03:00 CEST is 02:00 CET, 02:00-02:59 shows twice
    // (00:00-00:59 UTC, then 01:00-01:59 UTC). 02:30 runs once, at its first occurrence (CEST).
    {"Europe/Paris", "0 30 2 * * *", "2026-10-24T12:00:00Z", {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"}},
    // quarter hours from 01:50 CEST: 02:00, 02:15, 02:30, 02:45 CEST, none in the second pass, 03:00 CET
    {"Europe/Paris", "0 */15 * * * *", "2026-10-24T23:50:00Z",
     {"2026-10-25T00:00:00Z", "2026-10-25T00:15:00Z", "2026-10-25T00:30:00Z", "2026-10-25T00:45:00Z",
      "2026-10-25T02:00:00Z", "2026-10-25T02:15:00Z"}},
    // `after` at the last second of the first pass (02:59:59 CEST): next is 03:00 CET
    {"Europe/Paris", "0 */15 * * * *", "2026-10-25T00:59:59Z", {"2026-10-25T02:00:00Z", "2026-10-25T02:15:00Z", "2026-10-25T02:30:00Z"}},
    // `after` at the start of the second pass (02:00 CET) and inside it (02:10 CET): the hour's ticks have run
    {"Europe/Paris", "0 */15 * * * *", "2026-10-25T01:00:00Z", {"2026-10-25T02:00:00Z", "2026-10-25T02:15:00Z", "2026-10-25T02:30:00Z"}},
    {"Europe/Paris", "0 */15 * * * *", "2026-10-25T01:10:00Z", {"2026-10-25T02:00:00Z", "2026-10-25T02:15:00Z", "2026-10-25T02:30:00Z"}},
    {"Europe/Paris", "0 30 2 * * *", "2026-10-25T01:10:00Z", {"2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z", "2026-10-28T01:30:00Z"}},
    // `after` inside the first pass, before 02:30 CEST: 02:30 still runs, once
    {"Europe/Paris", "0 30 2 * * *", "2026-10-25T00:10:00Z", {"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"}},
    // hourly: 02:00 CEST, then 03:00 CET two real hours later (the second 02:00 does not run)
    {"Europe/Paris", "0 0 * * * *", "2026-10-24T23:30:00Z", {"2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"}},
    // Paris after 2037, the last change the tz files list: the rules still apply
    // (2040-07-02 02:30 CEST; 2040-10-28 fall back: 02:30 CEST, then CET)
    {"Europe/Paris", "0 30 2 * * *", "2040-07-01T12:00:00Z", {"2040-07-02T00:30:00Z", "2040-07-03T00:30:00Z", "2040-07-04T00:30:00Z"}},
    {"Europe/Paris", "0 30 2 * * *", "2040-10-27T12:00:00Z", {"2040-10-28T00:30:00Z", "2040-10-29T01:30:00Z", "2040-10-30T01:30:00Z"}},
    // a 29 March that is a Sunday is the last Sunday of March: its 02:30 never shows in Paris...
    {"Europe/Paris", "0 30 2 29 3 SUN", "2026-01-01T00:00:00Z", {}},
    // ...and does in UTC (2026, 2037, 2043 are such years)
    {"UTC", "0 30 2 29 3 SUN", "2026-01-01T00:00:00Z", {"2026-03-29T02:30:00Z", "2037-03-29T02:30:00Z", "2043-03-29T02:30:00Z"}},

    // New York, spring forward on 2026-03-08 (02:00 EST is 03:00 EDT): 02:30 EST on the 7th, none on the 8th, EDT after
    {"America/New_York", "0 30 2 * * *", "2026-03-07T00:00:00Z", {"2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"}},
    // fall back on 2026-11-01 (02:00 EDT is 01:00 EST): 01:30 once, in EDT, then EST
    {"America/New_York", "0 30 1 * * *", "2026-10-31T12:00:00Z", {"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z"}},
    // `after` in the second 01:00-01:59 (01:10 EST)
    {"America/New_York", "0 30 1 * * *", "2026-11-01T06:10:00Z", {"2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z", "2026-11-04T06:30:00Z"}},

    // Lord Howe, half-hour changes. 2026-04-05: 02:00 +11 is 01:30 +10:30, 01:30-01:59 shows twice.
    {"Australia/Lord_Howe", "0 45 1 * * *", "2026-04-04T00:00:00Z", {"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z", "2026-04-06T15:15:00Z"}},
    // quarter hours from 01:20 +11: 01:30, 01:45 (+11), none in the second pass, 02:00, 02:15 (+10:30)
    {"Australia/Lord_Howe", "0 */15 * * * *", "2026-04-04T14:20:00Z",
     {"2026-04-04T14:30:00Z", "2026-04-04T14:45:00Z", "2026-04-04T15:30:00Z", "2026-04-04T15:45:00Z"}},
    // 2026-10-04: 02:00 +10:30 is 02:30 +11: 02:15 on the 3rd (+10:30), none on the 4th, +11 after
    {"Australia/Lord_Howe", "0 15 2 * * *", "2026-10-02T00:00:00Z", {"2026-10-02T15:45:00Z", "2026-10-04T15:15:00Z", "2026-10-05T15:15:00Z"}},

    // Zones whose offset itself changed. Moscow on 2014-10-26 went from +4 for
    // good to +3: 02:00 +4 became 01:00 +3, 01:30 runs once, at +4, then at +3.
    {"Europe/Moscow", "0 30 1 * * *", "2014-10-25T12:00:00Z", {"2014-10-25T21:30:00Z", "2014-10-26T22:30:00Z", "2014-10-27T22:30:00Z"}},
    // Samoa crossed the date line: 2011-12-29 23:59:59 -10 was followed by
    // 2011-12-31 00:00:00 +14; the 30th never was. Noon: -10, none, +14.
    {"Pacific/Apia", "0 0 12 * * *", "2011-12-29T00:00:00Z", {"2011-12-29T22:00:00Z", "2011-12-30T22:00:00Z", "2011-12-31T22:00:00Z"}},
    // noon on 30 December: not in 2011, then at +14 (summer time there)
    {"Pacific/Apia", "0 0 12 30 12 *", "2011-12-29T00:00:00Z", {"2012-12-29T22:00:00Z", "2013-12-29T22:00:00Z", "2014-12-29T22:00:00Z"}},
};

}  // namespace

TEST_CASE("schedule: a cron schedule runs at the instants the zone's clocks show its ticks", "[schedule]") {
  for (const ZonedTicks& c : kZonedTicks) {
    INFO(c.zone << " '" << c.expression << "' after " << c.after);
    const Schedule schedule = Schedule::cron(c.expression, c.zone);
    const std::size_t count = c.runs.size() < 3 ? c.runs.size() + 1 : c.runs.size();
    CHECK(walk(schedule, at(c.after), count) == c.runs);
  }
}

TEST_CASE("schedule: over a fall-back night each civil minute runs once", "[schedule]") {
  // Paris, 2026-10-25, every minute from 00:00 CEST (22:00 UTC the day
  // before) to 04:00 CET (03:00 UTC): 240 civil minutes in 300 real ones.
  const Schedule schedule = Schedule::cron("0 * * * * *", "Europe/Paris");
  Instant t = at("2026-10-24T22:00:00Z");
  std::vector<Instant> runs;
  while (t < at("2026-10-25T03:00:00Z")) {
    const auto run = schedule.next(t);
    REQUIRE(run);
    REQUIRE(*run > t);
    runs.push_back(*run);
    t = *run;
  }
  CHECK(runs.size() == 240);
  CHECK(text_of(runs.back()) == "2026-10-25T03:00:00Z");
  // one pause: from 02:59 CEST (00:59 UTC) to 03:00 CET (02:00 UTC)
  std::vector<std::string> pauses;
  for (std::size_t i = 1; i < runs.size(); ++i)
    if (runs[i] - runs[i - 1] != minutes(1)) pauses.push_back(text_of(runs[i - 1]) + " " + text_of(runs[i]));
  CHECK(pauses == std::vector<std::string>{"2026-10-25T00:59:00Z 2026-10-25T02:00:00Z"});
}

TEST_CASE("schedule: over a spring-forward night the runs are a real minute apart", "[schedule]") {
  // Paris, 2026-03-29, every minute from 00:00 CET (23:00 UTC the day
  // before) to 04:00 CEST (02:00 UTC): 240 civil minutes, 60 of them
  // skipped, 180 runs a minute apart.
  const Schedule schedule = Schedule::cron("0 * * * * *", "Europe/Paris");
  Instant t = at("2026-03-28T23:00:00Z");
  std::size_t runs = 0;
  while (t < at("2026-03-29T02:00:00Z")) {
    const auto run = schedule.next(t);
    REQUIRE(run);
    REQUIRE(*run - t == minutes(1));
    t = *run;
    ++runs;
  }
  CHECK(runs == 180);
}

TEST_CASE("schedule: cron runs are whole seconds, after an instant with milliseconds too", "[schedule]") {
  const Schedule schedule = Schedule::cron("*/10 * * * * *", "Europe/Paris");
  CHECK(text_of(*schedule.next(at("2026-06-01T10:00:00Z") + milliseconds(1))) == "2026-06-01T10:00:10Z");
  CHECK(text_of(*schedule.next(at("2026-06-01T10:00:09Z") + milliseconds(999))) == "2026-06-01T10:00:10Z");
  CHECK(text_of(*schedule.next(at("2026-06-01T10:00:10Z"))) == "2026-06-01T10:00:20Z");
}

TEST_CASE("schedule: every runs at the anchor and each period after it", "[schedule]") {
  struct Case {
    milliseconds period;
    const char* anchor;
    milliseconds after;  // from the anchor
    milliseconds next;   // from the anchor
  };
  const std::vector<Case> cases = {
      {seconds(30), "2026-01-01T00:00:00Z", milliseconds(-1), milliseconds(0)},         // before: the anchor
      {seconds(30), "2026-01-01T00:00:00Z", -hours(24 * 365), milliseconds(0)},
      {seconds(30), "2026-01-01T00:00:00Z", milliseconds(0), seconds(30)},              // strictly after
      {seconds(30), "2026-01-01T00:00:00Z", milliseconds(29'999), seconds(30)},
      {seconds(30), "2026-01-01T00:00:00Z", seconds(30), seconds(60)},
      {seconds(30), "2026-01-01T00:00:00Z", hours(1) + milliseconds(1), hours(1) + seconds(30)},
      {milliseconds(1500), "2026-01-01T00:00:00Z", milliseconds(2999), milliseconds(3000)},
      {milliseconds(1500), "2026-01-01T00:00:00Z", milliseconds(3000), milliseconds(4500)},
      {milliseconds(7), "1969-12-31T23:59:59Z", milliseconds(1000), milliseconds(1001)},  // anchored before 1970
      // real time, not civil days: 00:00 CET on 29 March, then 01:00 CEST on the 30th
      {hours(24), "2026-03-28T23:00:00Z", hours(1), hours(24)},
  };
  for (const Case& c : cases) {
    INFO(c.period.count() << " ms from " << c.anchor << ", after anchor + " << c.after.count() << " ms");
    const Instant anchor = at(c.anchor);
    const auto run = Schedule::every(c.period, anchor).next(anchor + c.after);
    REQUIRE(run);
    CHECK((*run - anchor).count() == c.next.count());
  }
}

TEST_CASE("schedule: every ends at the clock's end and refuses a period that is not positive", "[schedule]") {
  const Instant near_end = Instant::max() - milliseconds(10);
  CHECK_FALSE(Schedule::every(hours(1), near_end).next(near_end));
  CHECK(Schedule::every(milliseconds(10), near_end).next(near_end) == Instant::max());
  CHECK_THROWS_AS(Schedule::every(milliseconds(0), Instant{}), UsageError);
  CHECK_THROWS_WITH(Schedule::every(milliseconds(-5), Instant{}), Catch::Contains("-5 ms"));
}

TEST_CASE("schedule: an unknown time zone is refused by name", "[schedule]") {
  for (const char* zone : {"Mars/Olympus", "europe/paris", "Europe", "localtime", "/usr/share/zoneinfo/UTC",
                           "../zoneinfo/UTC", "file:/usr/share/zoneinfo/UTC", "Europe/Paris/", "Fixed/UTC+01:00:00"}) {
    INFO(zone);
    CHECK_FALSE(is_known_time_zone(zone));
    try {
      Schedule::cron("0 0 0 * * *", zone);
      FAIL("no error");
    } catch (const UnknownTimeZoneError& e) {
      CHECK(e.zone() == zone);
      CHECK_THAT(e.what(), Catch::Contains(std::string("'") + zone + "'"));
      CHECK(dynamic_cast<const UsageError*>(&e) != nullptr);
    }
  }
  for (const char* zone : {"", "UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "America/Port-au-Prince"}) {
    INFO(zone);
    CHECK(is_known_time_zone(zone));
    CHECK_NOTHROW(Schedule::cron("0 0 0 * * *", zone));
  }
  // The expression is read first: its own error, whatever the zone.
  CHECK_THROWS_AS(Schedule::cron("0 0 0 32 * *", "Mars/Olympus"), CronError);
}
