// The dedupe suite (test_dedupe.cpp) on redis+sentinel://: a master, a
// replica and three sentinels for the executable (tests/sentinel/sentinel_fixture.h).
#pragma once

#include <string>

#include "sentinel_fixture.h"
#include "store/open.h"

#define WEAVE_DEDUPE_STORE_HOLDS_TEXT 1

inline std::string dedupe_store_url() {
  static sentinel_test::Sentinels sentinels;
  return sentinels.url();
}

// Writes a record's text the way another program would (routed by the store layer).
inline void store_raw_record(const std::string& key, const std::string& text) {
  auto exec = weave::store::open_executor(dedupe_store_url(), {});
  const std::string k = "{weave:dedupe:" + key + "}";
  exec->command(weave::store::Command{"SET", k, text, "PX", "60000"}, k, "test write");
}
