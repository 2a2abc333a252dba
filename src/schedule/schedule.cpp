#include "schedule/schedule.h"

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace WEAVE_NAMESPACE::detail {

using namespace std::chrono;

struct Schedule::Zone {
  cctz::time_zone tz;
};

namespace {

// A name as the tz database spells them ("America/Argentina/Buenos_Aires",
// "Etc/GMT+5"): cctz would also open a path or "file:...", which name no
// zone, and Debian's zoneinfo holds a link "localtime" to /etc/localtime,
// the machine's own zone, which differs from one machine to the next.
bool looks_like_zone_name(std::string_view name) {
  if (name.empty() || name == "localtime" || name.front() == '/' || name.back() == '/' ||
      name.find("//") != std::string_view::npos)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '/' || c == '_' ||
           c == '-' || c == '+';
  });
}

std::optional<cctz::time_zone> load_zone(std::string_view name) {
  cctz::time_zone tz = cctz::utc_time_zone();
  if (name.empty()) return tz;
  // cctz caches each zone it loads: a second load of a name is a lookup.
  if (!looks_like_zone_name(name) || !cctz::load_time_zone(std::string(name), &tz)) return std::nullopt;
  return tz;
}

// CronExpression's civil times and cctz's: seconds from 1970-01-01 00:00.
cctz::civil_second to_civil(local_seconds t) { return cctz::civil_second() + t.time_since_epoch().count(); }
local_seconds to_local(const cctz::civil_second& t) { return local_seconds(seconds(t - cctz::civil_second())); }

}  // namespace

bool is_known_time_zone(std::string_view zone) { return load_zone(zone).has_value(); }

Schedule Schedule::cron(std::string_view expression, std::string_view zone) {
  Schedule schedule;
  schedule.cron_ = CronExpression::parse(expression);
  const auto tz = load_zone(zone);
  if (!tz) throw UnknownTimeZoneError(zone);
  schedule.zone_ = std::make_shared<const Zone>(Zone{*tz});
  return schedule;
}

Schedule Schedule::every(milliseconds period, Instant anchor) {
  if (period <= milliseconds::zero())
    throw UsageError("schedule: every's period must be positive, not " + std::to_string(period.count()) + " ms");
  Schedule schedule;
  schedule.period_ = period;
  schedule.anchor_ = anchor;
  return schedule;
}

std::optional<Schedule::Instant> Schedule::next(Instant after) const {
  return cron_ ? next_cron(after) : next_period(after);
}

std::optional<Schedule::Instant> Schedule::next_period(Instant after) const {
  if (after < anchor_) return anchor_;
  // Unsigned: the distance between two instants may not fit a signed count.
  const auto count = [](Instant t) { return static_cast<std::uint64_t>(t.time_since_epoch().count()); };
  const std::uint64_t period = static_cast<std::uint64_t>(period_.count()), room = count(Instant::max()) - count(anchor_);
  const std::uint64_t since_anchor = count(after) - count(anchor_);
  const std::uint64_t last_run = since_anchor - since_anchor % period;  // the last at or before `after`
  if (room - last_run < period) return std::nullopt;
  return anchor_ + milliseconds(static_cast<milliseconds::rep>(last_run + period));
}

std::optional<Schedule::Instant> Schedule::next_cron(Instant after) const {
  const cctz::time_zone& tz = zone_->tz;
  // Runs are whole seconds: one after `after` is one after its second.
  const sys_seconds from = floor<seconds>(after);
  const cctz::civil_second start = tz.lookup(from).cs;
  const cctz::civil_second horizon(start.year() + 400, start.month(), start.day(), start.hour(), start.minute(),
                                   start.second());
  // Ticks are walked in civil order, which is the order of their instants
  // (each at its first occurrence). From `after`'s own civil time: with
  // `after` in a repeated hour's second pass, the ticks before it in that
  // hour ran in the first pass.
  local_seconds civil = to_local(start);
  while (const auto tick = cron_->next(civil)) {
    if (to_civil(*tick) > horizon) return std::nullopt;
    const cctz::time_zone::civil_lookup found = tz.lookup(to_civil(*tick));
    // SKIPPED: the clocks jump over it, no run. UNIQUE and REPEATED run at
    // `pre`, the (first) instant showing it.
    if (found.kind != cctz::time_zone::civil_lookup::SKIPPED && found.pre > from) return found.pre;
    civil = *tick;
    // The rest of the gap, or of a repeated hour whose first pass is over,
    // cannot run either: on to the civil time just before its end.
    if (found.kind == cctz::time_zone::civil_lookup::SKIPPED)
      civil = std::max(civil, to_local(tz.lookup(found.trans).cs) - seconds(1));
    else if (found.kind == cctz::time_zone::civil_lookup::REPEATED && from >= found.trans)
      civil = std::max(civil, to_local(tz.lookup(found.trans - seconds(1)).cs));
  }
  return std::nullopt;
}

}  // namespace weave::detail
