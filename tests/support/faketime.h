// A test program run under a wall clock skewed from the real one (Debian's
// faketime; the monotonic clock is left alone), read through a pipe:
//
//   FILE* p = start_under_faketime("-5m", worker + " offer " + args);
//   const std::string answer = first_line(p);   // "" if it said nothing
//
// Several may run at once: start them all, then read each.
#pragma once

#include <stdio.h>

#include <string>
#include <string_view>

// popen()s `command` under `skew` ("+5m", "-30s": faketime -f), its errors
// on the same pipe as its output.
inline FILE* start_under_faketime(std::string_view skew, const std::string& command) {
  // (ASan builds: libfaketime is preloaded before the sanitizer's runtime, which then must not insist on coming first.)
  const std::string cmd = "ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" FAKETIME_DONT_FAKE_MONOTONIC=1 "
                          "faketime -f '" + std::string(skew) + "' " + command + " 2>&1";
  return ::popen(cmd.c_str(), "r");
}

// The first line `p` gives (without its newline), then pclose(); "" for none
// or for a null `p`.
inline std::string first_line(FILE* p) {
  if (!p) return "";
  char line[512] = {0};
  const bool read = ::fgets(line, sizeof line, p) != nullptr;
  ::pclose(p);
  std::string out = read ? line : "";
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}
