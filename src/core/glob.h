// Glob patterns (Redis SCAN MATCH, fnmatch): `text` matched literally.
#pragma once

#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// `text` with the glob's special characters (* ? [ ] \) escaped.
inline std::string glob_literal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace weave::detail
