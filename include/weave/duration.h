// weave/duration.h — the one way Weave spells a duration, shared by weavegen
// (annotation arguments such as ttl=30s), the JSON config file and code:
// a non-negative integer and a unit, ms, s, min or h.
//
//   weave::DurationParse d = weave::parse_duration_text("250ms");
//   if (!d) throw std::invalid_argument(d.error);   // d.value == 250ms
//
// "5m" is refused (minutes or milliseconds?); write 5min.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace WEAVE_NAMESPACE {

// The longest duration Weave accepts anywhere: deadlines are steady_clock
// nanoseconds, and a lease or timeout past this would overflow them.
inline constexpr std::chrono::milliseconds max_duration = std::chrono::hours(24 * 365 * 10);

struct WEAVE_API DurationParse {
  std::chrono::milliseconds value{0};
  std::string error;  // "" when `value` holds the duration
  explicit operator bool() const noexcept { return error.empty(); }
};

inline DurationParse parse_duration_text(std::string_view text) {
  std::size_t i = 0;
  std::int64_t n = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > max_duration.count()) break;  // already too long; stop before overflowing
    n = n * 10 + (text[i] - '0');
  }
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0) return {{}, "expected a duration such as 30s, 250ms, 2min or 1h"};
  const std::string_view unit = text.substr(i);
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "min") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else if (unit.empty()) return {{}, "duration '" + std::string(text) + "' needs a unit (ms, s, min or h)"};
  else return {{}, "unknown duration unit '" + std::string(unit) + "' (use ms, s, min or h)"};
  if (n > max_duration.count() / scale)
    return {{}, "duration '" + std::string(text) + "' is too long (at most 10 years)"};
  return {std::chrono::milliseconds(n * scale), ""};
}

}  // namespace weave
