// When a [[scheduled]] method runs next, as an instant: a cron expression
// read on the clocks of an IANA time zone, or a fixed period.
//
//   using weave::detail::Schedule;
//   const Schedule::Instant now = std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
//   auto nightly = Schedule::cron("0 30 2 * * *", "Europe/Paris");
//   std::optional<Schedule::Instant> t = nightly.next(now);     // the next 02:30 in Paris
//   auto beat = Schedule::every(std::chrono::seconds(30), now);  // at now, now + 30 s, now + 60 s...
//
// Time zones are the system's tz database (/usr/share/zoneinfo, or $TZDIR),
// read through cctz (libcctz), whose rules also cover the years after the
// database's last listed change; nothing is downloaded. A zone is named as
// in the database ("America/New_York", "UTC"); "" is UTC.
//
// Daylight-saving changes follow cron's rules:
//   - a civil time the clocks skip (02:30 when they go from 02:00 to 03:00)
//     is no tick: "0 30 2 * * *" does not run that day;
//   - a civil time the clocks show twice (02:30 when they go back from 03:00
//     to 02:00) is one tick, at its first occurrence: the repeated hour's
//     ticks all run in its first pass, its second pass has none. With
//     `after` inside the second pass, next() is the first tick after the
//     repeated hour, not a second run of a tick that has run already.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "schedule/cron.h"
#include "weave/abi.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

// A zone name the tz database does not know (or one that is no zone name:
// a path, "localtime": the machine's zone). zone() is the name; what()
// names it too, for weavegen's diagnostic.
class UnknownTimeZoneError : public UsageError {
 public:
  explicit UnknownTimeZoneError(std::string_view zone)
      : UsageError("unknown time zone '" + std::string(zone) + "': not in the tz database (/usr/share/zoneinfo)"),
        zone_(zone) {}
  const std::string& zone() const noexcept { return zone_; }

 private:
  std::string zone_;
};

// Whether Schedule::cron() takes `zone` ("" is, as UTC).
bool is_known_time_zone(std::string_view zone);

class Schedule {
 public:
  using Instant = std::chrono::sys_time<std::chrono::milliseconds>;

  // Throws CronError for the expression, UnknownTimeZoneError for the zone.
  static Schedule cron(std::string_view expression, std::string_view zone = {});
  // Runs at anchor, anchor + period, anchor + 2 period...: an anchor shared
  // by every process keeps their runs on the same instants. Throws
  // UsageError unless period > 0.
  static Schedule every(std::chrono::milliseconds period, Instant anchor);

  // The first run strictly after `after`; none when the cron expression has
  // none within 400 years of it (or the period's runs pass the clock's end).
  // A cron schedule's runs are whole seconds.
  std::optional<Instant> next(Instant after) const;

 private:
  struct Zone;  // cctz's, kept out of this header

  Schedule() = default;
  std::optional<Instant> next_cron(Instant after) const;
  std::optional<Instant> next_period(Instant after) const;

  std::optional<CronExpression> cron_;      // a cron schedule...
  std::shared_ptr<const Zone> zone_;        // ...in this zone
  std::chrono::milliseconds period_{0};     // or a period schedule
  Instant anchor_{};
};

}  // namespace weave::detail
