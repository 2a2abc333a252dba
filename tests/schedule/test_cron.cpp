// detail::CronExpression: Spring's six-field cron expressions, the next
// civil date-times they fire at, and the refusals of invalid ones with the
// field, its text and its offset. The expected ticks were worked out from
// the calendar (2025-02-15 is a Saturday, 2025-08-31 a Sunday...) and
// checked against a separate brute-force walk over the days.
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "schedule/cron.h"
#include "time_text.h"

using weave::detail::CronError;
using weave::detail::CronExpression;
using namespace std::chrono;

namespace {

local_seconds at(const std::string& text) { return schedule_test::time_at<local_t>(text); }
using schedule_test::text_of;

struct Ticks {
  const char* expression;
  const char* after;
  std::vector<std::string> next;  // the next ticks in turn; empty: never
};

const std::vector<Ticks> kTicks = {
    // lists, ranges, steps
    {"0 15,45 * * * *", "2025-03-10T10:20:00", {"2025-03-10T10:45:00", "2025-03-10T11:15:00", "2025-03-10T11:45:00"}},
    {"0 0 9-11 * * *", "2025-03-10T10:30:00", {"2025-03-10T11:00:00", "2025-03-11T09:00:00", "2025-03-11T10:00:00"}},
    {"10-50/15 * * * * *", "2025-03-10T10:00:41", {"2025-03-10T10:01:10", "2025-03-10T10:01:25", "2025-03-10T10:01:40"}},
    {"0 7/20 * * * *", "2025-03-10T10:50:00", {"2025-03-10T11:07:00", "2025-03-10T11:27:00", "2025-03-10T11:47:00"}},
    // */5 in every field (day-of-week's * is Spring's 1-7: */5 is Monday and Saturday)
    {"*/5 * * * * *", "2025-03-10T10:00:03", {"2025-03-10T10:00:05", "2025-03-10T10:00:10", "2025-03-10T10:00:15"}},
    {"0 */5 * * * *", "2025-03-10T10:58:00", {"2025-03-10T11:00:00", "2025-03-10T11:05:00", "2025-03-10T11:10:00"}},
    {"0 0 */5 * * *", "2025-03-10T21:00:00", {"2025-03-11T00:00:00", "2025-03-11T05:00:00", "2025-03-11T10:00:00"}},
    {"0 0 0 */5 * *", "2025-01-29T00:00:00", {"2025-01-31T00:00:00", "2025-02-01T00:00:00", "2025-02-06T00:00:00"}},
    {"0 0 0 1 */5 *", "2025-07-01T00:00:00", {"2025-11-01T00:00:00", "2026-01-01T00:00:00", "2026-06-01T00:00:00"}},
    {"0 0 0 * * */5", "2025-03-10T00:00:00", {"2025-03-15T00:00:00", "2025-03-17T00:00:00", "2025-03-22T00:00:00"}},
    {"0 0 0 * * 0/2", "2025-03-10T00:00:00", {"2025-03-11T00:00:00", "2025-03-13T00:00:00", "2025-03-15T00:00:00"}},
    // names, any case
    {"0 0 0 1 JAN-MAR,oct *", "2025-02-15T00:00:00", {"2025-03-01T00:00:00", "2025-10-01T00:00:00", "2026-01-01T00:00:00"}},
    {"0 30 8 * * MON-FRI", "2025-03-07T09:00:00", {"2025-03-10T08:30:00", "2025-03-11T08:30:00", "2025-03-12T08:30:00"}},
    {"0 30 8 * * mon-fri", "2025-03-07T09:00:00", {"2025-03-10T08:30:00", "2025-03-11T08:30:00", "2025-03-12T08:30:00"}},
    // Sunday as 0, 7 and SUN; SUN at a range's start is 0
    {"0 0 0 * * 0", "2025-03-10T00:00:00", {"2025-03-16T00:00:00", "2025-03-23T00:00:00", "2025-03-30T00:00:00"}},
    {"0 0 0 * * 7", "2025-03-10T00:00:00", {"2025-03-16T00:00:00", "2025-03-23T00:00:00", "2025-03-30T00:00:00"}},
    {"0 0 0 * * SUN", "2025-03-10T00:00:00", {"2025-03-16T00:00:00", "2025-03-23T00:00:00", "2025-03-30T00:00:00"}},
    {"0 0 0 * * SUN-TUE", "2025-03-13T00:00:00", {"2025-03-16T00:00:00", "2025-03-17T00:00:00", "2025-03-18T00:00:00"}},
    {"0 0 0 * * 5-7", "2025-03-10T00:00:00", {"2025-03-14T00:00:00", "2025-03-15T00:00:00", "2025-03-16T00:00:00"}},
    // ? in either day field
    {"0 0 7 ? * MON-FRI", "2025-03-07T08:00:00", {"2025-03-10T07:00:00", "2025-03-11T07:00:00", "2025-03-12T07:00:00"}},
    {"0 0 0 10 * ?", "2025-03-10T00:00:00", {"2025-04-10T00:00:00", "2025-05-10T00:00:00", "2025-06-10T00:00:00"}},
    // L, L-3, LW (May 31 2025 is a Saturday, Aug 31 a Sunday)
    {"0 0 0 L * *", "2024-01-15T00:00:00", {"2024-01-31T00:00:00", "2024-02-29T00:00:00", "2024-03-31T00:00:00"}},
    {"0 0 0 L-3 * *", "2025-01-01T00:00:00", {"2025-01-28T00:00:00", "2025-02-25T00:00:00", "2025-03-28T00:00:00"}},
    {"0 0 0 LW * *", "2025-05-01T00:00:00", {"2025-05-30T00:00:00", "2025-06-30T00:00:00", "2025-07-31T00:00:00"}},
    {"0 0 0 LW * *", "2025-08-01T00:00:00", {"2025-08-29T00:00:00", "2025-09-30T00:00:00", "2025-10-31T00:00:00"}},
    // nW: Feb 15 2025 is a Saturday (Friday 14th), Jun 15 a Sunday (Monday
    // 16th); Feb 1 and Mar 1 are Saturdays (Monday 3rd, not the month
    // before); 31W runs in 31-day months only, Aug 31 a Sunday: Friday 29th
    {"0 0 0 15W * ?", "2025-02-01T00:00:00", {"2025-02-14T00:00:00", "2025-03-14T00:00:00", "2025-04-15T00:00:00"}},
    {"0 0 0 15W * ?", "2025-06-01T00:00:00", {"2025-06-16T00:00:00", "2025-07-15T00:00:00", "2025-08-15T00:00:00"}},
    {"0 0 0 1W * ?", "2025-01-02T00:00:00", {"2025-02-03T00:00:00", "2025-03-03T00:00:00", "2025-04-01T00:00:00"}},
    {"0 0 0 31W * ?", "2025-07-31T00:00:00", {"2025-08-29T00:00:00", "2025-10-31T00:00:00", "2025-12-31T00:00:00"}},
    {"0 0 0 1W,15,LW * ?", "2025-02-01T00:00:00", {"2025-02-03T00:00:00", "2025-02-15T00:00:00", "2025-02-28T00:00:00"}},
    // 5L (last Friday), 5#3 (third Friday), lists of them, a fifth Sunday
    {"0 0 0 ? * 5L", "2025-01-01T00:00:00", {"2025-01-31T00:00:00", "2025-02-28T00:00:00", "2025-03-28T00:00:00"}},
    {"0 0 0 ? * 5#3", "2025-01-01T00:00:00", {"2025-01-17T00:00:00", "2025-02-21T00:00:00", "2025-03-21T00:00:00"}},
    {"0 0 0 ? * FRI#3", "2025-01-01T00:00:00", {"2025-01-17T00:00:00", "2025-02-21T00:00:00", "2025-03-21T00:00:00"}},
    {"0 0 0 ? * THU#1,THU#5", "2025-01-01T00:00:00", {"2025-01-02T00:00:00", "2025-01-30T00:00:00", "2025-02-06T00:00:00"}},
    {"0 0 0 ? * SUN#5", "2025-01-01T00:00:00", {"2025-03-30T00:00:00", "2025-06-29T00:00:00", "2025-08-31T00:00:00"}},
    // both day fields restricted: a day must match both, as in Spring
    {"0 0 0 13 * FRI", "2025-01-01T00:00:00", {"2025-06-13T00:00:00", "2026-02-13T00:00:00", "2026-03-13T00:00:00"}},
    {"0 0 0 1-7 * MON", "2025-01-01T00:00:00", {"2025-01-06T00:00:00", "2025-02-03T00:00:00", "2025-03-03T00:00:00"}},
    // Feb 29: the next leap years; one that is also a Wednesday
    {"0 0 0 29 2 *", "2025-01-01T00:00:00", {"2028-02-29T00:00:00", "2032-02-29T00:00:00", "2036-02-29T00:00:00"}},
    {"0 0 0 29 2 WED", "2012-02-29T00:00:00", {"2040-02-29T00:00:00"}},
    // year rollover; strictly after
    {"59 59 23 31 12 *", "2025-12-31T23:59:59", {"2026-12-31T23:59:59", "2027-12-31T23:59:59"}},
    {"0 0 0 * * *", "2025-12-31T12:00:00", {"2026-01-01T00:00:00", "2026-01-02T00:00:00"}},
    {"*/20 */30 * * * *", "2025-12-31T23:59:40", {"2026-01-01T00:00:00", "2026-01-01T00:00:20", "2026-01-01T00:00:40"}},
    {"0 0 12 * * *", "2025-03-10T12:00:00", {"2025-03-11T12:00:00", "2025-03-12T12:00:00"}},
    // never
    {"0 0 0 30 2 ?", "2025-01-01T00:00:00", {}},
    {"0 0 0 31 4,6,9,11 *", "2025-01-01T00:00:00", {}},
    // macros
    {"@daily", "2025-03-10T10:00:00", {"2025-03-11T00:00:00", "2025-03-12T00:00:00"}},
    {"@hourly", "2025-03-10T10:00:00", {"2025-03-10T11:00:00", "2025-03-10T12:00:00"}},
    {"@weekly", "2025-03-10T10:00:00", {"2025-03-16T00:00:00", "2025-03-23T00:00:00"}},
    {"@monthly", "2025-03-10T10:00:00", {"2025-04-01T00:00:00", "2025-05-01T00:00:00"}},
    {"@yearly", "2025-03-10T10:00:00", {"2026-01-01T00:00:00", "2027-01-01T00:00:00"}},
};

struct Invalid {
  const char* expression;
  int field;            // -1: the expression as a whole
  const char* problem;  // a part of problem()
};

const std::vector<Invalid> kInvalid = {
    // the expression as a whole
    {"0 0 * * *", -1, "expected 6 fields (second minute hour day-of-month month day-of-week), found 5"},
    {"0 0 0 * * * 2025", -1, "found more"},
    {"", -1, "empty"},
    {"   ", -1, "empty"},
    {"@fortnightly", -1, "unknown macro '@fortnightly'"},
    // out of range, each field
    {"60 * * * * *", 0, "second: 60 is out of range 0-59"},
    {"* 60 * * * *", 1, "minute: 60 is out of range 0-59"},
    {"* * 24 * * *", 2, "hour: 24 is out of range 0-23"},
    {"* * * 32 * *", 3, "day-of-month: 32 is out of range 1-31"},
    {"* * * 0 * *", 3, "day-of-month: 0 is out of range 1-31"},
    {"* * * * 13 *", 4, "month: 13 is out of range 1-12"},
    {"* * * * 0 *", 4, "month: 0 is out of range 1-12"},
    {"* * * * * 8", 5, "day-of-week: 8 is out of range 0-7"},
    {"* * * * * 99999999999", 5, "is out of range 0-7"},
    {"0 0 0 32W * *", 3, "day-of-month: 32 is out of range 1-31"},
    {"0 0 0 ? * 8L", 5, "day-of-week: 8 is out of range 0-7"},
    // steps and ranges (Spring refuses a reversed range; SUN-x is 0-x)
    {"*/0 * * * * *", 0, "second: step 0 must be 1 or more"},
    {"0 0 0 * JAN/0 *", 4, "month: step 0"},
    {"0 */ * * * *", 1, "minute: '/' needs a step"},
    {"0 0 5-1 * * *", 2, "hour: range 5-1 is reversed"},
    {"0 0 0 * * SAT-MON", 5, "day-of-week: range 6-1 is reversed"},
    // names
    {"0 0 0 * FOO *", 4, "month: unknown name 'FOO' (JAN-DEC)"},
    {"0 0 0 * * FUNDAY", 5, "day-of-week: unknown name 'FUNDAY' (MON-SUN)"},
    {"0 0 0 * MON *", 4, "month: unknown name 'MON'"},
    {"0 0 0 * * JAN", 5, "day-of-week: unknown name 'JAN'"},
    {"0 0 MON * * *", 2, "hour: unexpected 'M' in 'MON'"},
    // L, W, #, ? where they are not allowed, or malformed
    {"L * * * * *", 0, "second: 'L' is allowed only in day-of-month and day-of-week"},
    {"0 0 L * * *", 2, "hour: 'L' is allowed only"},
    {"0 0 0 * L *", 4, "month: 'L' is allowed only"},
    {"0 0 0 ? * 5W", 5, "day-of-week: 'W' is allowed only in day-of-month"},
    {"0 0 0 1#2 * *", 3, "day-of-month: '#' is allowed only in day-of-week"},
    {"0 0 ? * * *", 2, "hour: '?' is allowed only in day-of-month and day-of-week"},
    {"0 0 0 ?,1 * *", 3, "day-of-month: '?' must be the whole field"},
    {"0 0 0 ? * L", 5, "day-of-week: 'L' needs a day of the week before it"},
    {"0 0 0 L-0 * *", 3, "day-of-month: L-0 is out of range 1-30"},
    {"0 0 0 L-31 * *", 3, "day-of-month: L-31 is out of range 1-30"},
    {"0 0 0 L3 * *", 3, "day-of-month: unexpected '3' after 'L'"},
    {"0 0 0 W * *", 3, "day-of-month: 'W' needs a day before it"},
    {"0 0 0 ? * 5#6", 5, "day-of-week: #6 is out of range 1-5"},
    {"0 0 0 ? * 5#0", 5, "day-of-week: #0 is out of range 1-5"},
    {"0 0 0 ? * 5#", 5, "day-of-week: '#' needs an ordinal after it"},
    {"0 0 0 ? * #3", 5, "day-of-week: '#' needs a day of the week before it"},
    // garbage
    {"0 0 $ * * *", 2, "hour: unexpected '$' in '$'"},
    {"0x10 * * * * *", 0, "second: unexpected 'x' in '0x10'"},
    {"0 0 0 * * 1.5", 5, "day-of-week: unexpected '.' in '1.5'"},
    {"0 0 1,,2 * * *", 2, "hour: empty list item in '1,,2'"},
    {"0 0 1, * * *", 2, "hour: empty list item"},
    {"0 0 1- * * *", 2, "hour: '1-' lacks a value"},
    {"0 0 1-2-3 * * *", 2, "hour: unexpected '-' in '1-2-3'"},
    {"0 0 0 * * MON-", 5, "day-of-week: 'MON-' lacks a value"},
};

}  // namespace

TEST_CASE("cron: each expression fires at the expected date-times in turn, or never", "[schedule]") {
  for (const Ticks& row : kTicks) {
    INFO("expression '" << row.expression << "' after " << row.after);
    const CronExpression cron = CronExpression::parse(row.expression);
    local_seconds t = at(row.after);
    if (row.next.empty()) CHECK_FALSE(cron.next(t).has_value());
    for (const std::string& expected : row.next) {
      const std::optional<local_seconds> n = cron.next(t);
      REQUIRE(n.has_value());
      CHECK(text_of(*n) == expected);
      CHECK(cron.matches(*n));
      if (*n - seconds(1) > t) CHECK_FALSE(cron.matches(*n - seconds(1)));  // the second before did not match
      t = *n;
    }
  }
}

TEST_CASE("cron: an invalid expression is refused with the field, its text and its offset", "[schedule]") {
  for (const Invalid& row : kInvalid) {
    INFO("expression '" << row.expression << "'");
    const std::string expression = row.expression;
    bool threw = false;
    try {
      (void)CronExpression::parse(expression);
    } catch (const CronError& e) {
      threw = true;
      CHECK(e.field() == row.field);
      CHECK_THAT(e.problem(), Catch::Contains(row.problem));
      CHECK_THAT(std::string(e.what()), Catch::Contains(e.problem()) && Catch::Contains("'" + expression + "'"));
      // text() is what the expression holds at offset()
      REQUIRE(e.offset() <= expression.size());
      CHECK(expression.substr(e.offset(), e.text().size()) == e.text());
      if (row.field >= 0) CHECK(e.text().find(' ') == std::string::npos);
    }
    CHECK(threw);
  }
}

TEST_CASE("cron: a refusal points at its field after any run of spaces or tabs", "[schedule]") {
  try {
    (void)CronExpression::parse(" 0 0\t12  32 * *");
    FAIL("parsed");
  } catch (const CronError& e) {
    CHECK(e.field() == 3);
    CHECK(e.text() == "32");
    CHECK(e.offset() == 9);
    CHECK(e.problem() == "day-of-month: 32 is out of range 1-31");
  }
  try {
    (void)CronExpression::parse("0 0 0 * * * 2025 x");
    FAIL("parsed");
  } catch (const CronError& e) {
    CHECK(e.field() == -1);
    CHECK(e.text() == "2025 x");  // the surplus
    CHECK(e.offset() == 12);
  }
}

TEST_CASE("cron: a refusal is a weave::UsageError", "[schedule]") {
  CHECK_THROWS_AS(CronExpression::parse("* * * 32 * *"), weave::UsageError);
}

TEST_CASE("cron: next() finds the first matching second a second-by-second walk finds", "[schedule]") {
  for (const char* expression : {"*/7 13-17,45 */3 * * *", "15,45 59 23 L * *", "0-10/5 0 9-17/4 * * MON,TUE",
                                 "30 * 0 ? * 0,2", "0,59 0,59 0,23 1,LW * ?"}) {
    INFO("expression '" << expression << "'");
    const CronExpression cron = CronExpression::parse(expression);
    // Across a month's end (and a European clock change: no zone here).
    local_seconds t = at("2025-03-30T20:00:00");
    const local_seconds end = at("2025-04-01T12:00:00");
    int ticks = 0;
    for (;;) {
      const std::optional<local_seconds> n = cron.next(t);
      REQUIRE(n.has_value());
      local_seconds walk = t;
      do walk += seconds(1);
      while (walk < *n && walk < end && !cron.matches(walk));
      if (walk != *n && !cron.matches(walk)) break;  // at the walk's end, nothing matched
      CHECK(text_of(walk) == text_of(*n));
      t = *n;
      ++ticks;
    }
    CHECK(ticks > 0);
  }
}

TEST_CASE("cron: an expression that never matches has no next tick", "[schedule]") {
  for (const char* expression : {"0 0 0 30 2 ?", "59 59 23 31 11 *", "* * * L-30 FEB *", "0 0 0 31 2,4 *"}) {
    INFO("expression '" << expression << "'");
    CHECK_FALSE(CronExpression::parse(expression).next(at("2025-01-01T00:00:00")).has_value());
  }
}

TEST_CASE("cron: next() at the calendar's ends returns none or the first match, never wraps", "[schedule]") {
  const CronExpression daily = CronExpression::parse("0 0 0 * * *");
  CHECK_FALSE(daily.next(local_seconds::max()).has_value());
  CHECK_FALSE(daily.next(at("32766-12-31T12:00:00")).has_value());
  const std::optional<local_seconds> first = daily.next(local_seconds::min());
  REQUIRE(first.has_value());
  CHECK(year_month_day{floor<days>(*first)}.year() == year::min());
}
