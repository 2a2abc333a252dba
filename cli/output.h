// How `weave` prints: aligned tables for people, JSON (--json) for scripts,
// one "weave: ..." line for an error.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weave_cli {

struct Output {
  bool json = false;
  // Prints `rows` under `header`, columns padded to the widest cell; or
  // `as_json` when --json.
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const nlohmann::json& as_json) const;
  // A message for people; `as_json` when --json.
  void say(const std::string& text, const nlohmann::json& as_json) const;
};

// "1.2s", "350ms", "42us": a short, readable duration.
std::string readable(std::chrono::nanoseconds d);
// A system-clock time as Unix milliseconds (JSON and tables).
long long unix_ms(std::chrono::system_clock::time_point t);

}  // namespace weave_cli
