#include "output.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace weave_cli {

void Output::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                   const nlohmann::json& as_json) const {
  if (json) {
    std::cout << as_json.dump(2) << '\n';
    return;
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      out += cells[c];
      if (c + 1 < cells.size()) out += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    std::cout << out << '\n';
  };
  line(header);
  for (const auto& row : rows) line(row);
}

void Output::say(const std::string& text, const nlohmann::json& as_json) const {
  if (json)
    std::cout << as_json.dump(2) << '\n';
  else
    std::cout << text << '\n';
}

std::string readable(std::chrono::nanoseconds d) {
  char buf[32];
  const double us = static_cast<double>(d.count()) / 1e3;
  if (us >= 1e6) std::snprintf(buf, sizeof buf, "%.1fs", us / 1e6);
  else if (us >= 1e3) std::snprintf(buf, sizeof buf, "%.0fms", us / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0fus", us);
  return buf;
}

long long unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace weave_cli
