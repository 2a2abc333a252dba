// A cron expression, Spring's six fields with seconds first, and the next
// civil date-time it fires at: what [[scheduled(cron=...)]] will run by.
//
//   auto cron = weave::detail::CronExpression::parse("0 */15 9-17 * * MON-FRI");
//   std::optional<std::chrono::local_seconds> t = cron.next(now);  // a quarter hour of office hours, after now
//
// Fields: second minute hour day-of-month month day-of-week. Each takes *,
// a value, a range a-b, a list a,b, and a step */n, a/n (a to the field's
// last value) or a-b/n. Months may be named JAN-DEC, days of the week
// MON-SUN (any case); Sunday is 0 or 7. Day-of-month and day-of-week may be
// ? (as *). Day-of-month also takes L (its last day), L-n (n days before
// it), LW (its last weekday) and nW (the weekday nearest the n-th, within
// the month); day-of-week takes dL (the month's last d) and d#k (its k-th
// d, k 1-5). The macros @yearly (@annually), @monthly, @weekly, @daily
// (@midnight) and @hourly stand for their six fields.
//
// As Spring's CronExpression (5.3 and later) does, a day matches when it
// matches day-of-month AND day-of-week: "0 0 0 13 * FRI" is every Friday
// the 13th (Unix cron would run on every 13th and every Friday). A field
// that is * or ? lets every day through, so the other alone decides.
//
// Civil time only: next() and matches() read and return date-times on the
// calendar's clock, with no zone. Schedule (schedule.h) maps them to
// instants in a time zone (a time skipped or repeated when clocks change).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weave/abi.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

// An expression CronExpression::parse() refuses, with where it went wrong,
// enough for a compiler-style diagnostic (caret under the field):
//   problem()  "day-of-month: 32 is out of range 1-31"
//   field()    3 (0 second ... 5 day-of-week; -1 when no one field is at
//              fault: the expression is empty, has other than six fields,
//              or names an unknown macro)
//   text()     "32", the field's text (with -1: the part at fault)
//   offset()   where text() starts in the expression
// what() says the expression and the problem.
class CronError : public UsageError {
 public:
  CronError(std::string_view expression, int field, std::string_view text, std::size_t offset, std::string problem)
      : UsageError("cron expression '" + std::string(expression) + "': " + problem),
        problem_(std::move(problem)),
        text_(text),
        offset_(offset),
        field_(field) {}
  int field() const noexcept { return field_; }
  const std::string& text() const noexcept { return text_; }
  std::size_t offset() const noexcept { return offset_; }
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string problem_, text_;
  std::size_t offset_;
  int field_;
};

class CronExpression {
 public:
  // Throws CronError. Fields are separated by spaces or tabs.
  static CronExpression parse(std::string_view expression);

  // The first date-time strictly after `after` that matches, or none within
  // 400 years of it: the calendar repeats itself every 400 years, so an
  // expression that finds nothing there never matches ("0 0 0 30 2 ?").
  // Steps over whole months, days, hours and minutes that cannot match.
  std::optional<std::chrono::local_seconds> next(std::chrono::local_seconds after) const;
  bool matches(std::chrono::local_seconds t) const;

  // The expression as given to parse().
  const std::string& text() const noexcept { return text_; }

  // A day-of-month or day-of-week element that names a day only within a
  // given month (L, L-n, LW, nW; dL, d#k).
  struct MonthDay {
    enum Kind : std::uint8_t { last_minus, last_weekday, nearest_weekday, last_of_weekday, nth_of_weekday } kind;
    std::uint8_t n;    // last_minus: the offset; nearest_weekday: the day; *_of_weekday: 0 Sunday - 6 Saturday
    std::uint8_t k;    // nth_of_weekday: which one, 1-5
  };

 private:
  // The days of `ym` that match both day fields: bit d for day d.
  std::uint32_t days_of(std::chrono::year_month ym) const;
  // The first second of a day at or after `from` (seconds since midnight)
  // that matches the time fields.
  std::optional<std::uint32_t> time_from(std::uint32_t from) const;

  std::string text_;
  std::uint64_t seconds_ = 0, minutes_ = 0;  // bit i: i matches
  std::uint32_t hours_ = 0;
  std::uint32_t days_ = 0;       // bits 1-31: day-of-month's plain values
  std::uint16_t months_ = 0;     // bits 1-12
  std::uint8_t weekdays_ = 0;    // bits 0 (Sunday) - 6 (Saturday): day-of-week's plain values
  std::vector<MonthDay> month_days_, weekday_days_;  // day-of-month's, day-of-week's
};

}  // namespace weave::detail
