// The schedule tests' tables write date-times as text: "2025-03-10T10:20:00"
// on the calendar's clock (local_t, cron's civil times) and
// "2026-03-29T01:00:00Z" in UTC (system_clock, Schedule's instants).
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <type_traits>

namespace schedule_test {

template <class Clock>
constexpr const char* kZoneSuffix = std::is_same_v<Clock, std::chrono::system_clock> ? "Z" : "";

template <class Clock>
std::chrono::time_point<Clock, std::chrono::seconds> time_at(const std::string& text) {
  using namespace std::chrono;
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
  REQUIRE(std::sscanf(text.c_str(), "%d-%u-%uT%u:%u:%u", &y, &mo, &d, &h, &mi, &s) == 6);
  REQUIRE(text.substr(text.find(':') + 6) == kZoneSuffix<Clock>);
  const year_month_day ymd{year{y}, month{mo}, day{d}};
  REQUIRE(ymd.ok());
  return time_point<Clock, days>{ymd} + hours{h} + minutes{mi} + seconds{s};
}

// A UTC date-time as Schedule's instants are.
inline std::chrono::sys_time<std::chrono::milliseconds> instant_at(const std::string& text) {
  return time_at<std::chrono::system_clock>(text);
}

// Milliseconds, if any, follow as " +250ms".
template <class Clock, class Duration>
std::string text_of(std::chrono::time_point<Clock, Duration> t) {
  using namespace std::chrono;
  const time_point<Clock, days> date = floor<days>(t);
  const year_month_day ymd{date};
  const hh_mm_ss<milliseconds> hms{duration_cast<milliseconds>(t - date)};
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d%s", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), kZoneSuffix<Clock>);
  std::string text = buf;
  if (hms.subseconds().count()) text += " +" + std::to_string(hms.subseconds().count()) + "ms";
  return text;
}

}  // namespace schedule_test
