// The cache suite (test_cache.cpp) on redis+sentinel://: a master, a replica
// and three sentinels for the executable (tests/sentinel/sentinel_fixture.h).
#pragma once

#include <string>

#include "sentinel_fixture.h"
#include "store_raw.h"

inline std::string cache_store_url() {
  static sentinel_test::Sentinels sentinels;
  return sentinels.url();
}

inline void store_raw_json(const std::string& name, const std::string& key, const std::string& json) {
  store_raw_entry(cache_store_url(), name, key, json);
}
