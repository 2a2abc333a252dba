// The cache suite (test_cache.cpp) on redis://: one redis-server for the
// executable, started on first use on a free loopback port, killed at exit.
#pragma once

#include <string>

#include "redis_server.h"
#include "store_raw.h"

inline redis_test::RedisServer& cache_suite_server() {
  static redis_test::RedisServer server;
  return server;
}

inline std::string cache_store_url() { return cache_suite_server().url(); }

inline void store_raw_json(const std::string& name, const std::string& key, const std::string& json) {
  store_raw_entry(cache_store_url(), name, key, json);
}
