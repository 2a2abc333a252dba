// The cache suite (test_cache.cpp) on redis://: one redis-server for the
// executable, started on first use on a free loopback port, killed at exit.
#pragma once

#include <memory>
#include <string>

#include "redis_server.h"

inline redis_test::RedisServer& cache_suite_server() {
  static redis_test::RedisServer server;
  return server;
}

inline std::string cache_store_url() { return cache_suite_server().url(); }

// Writes a value the way another program would: "<version>:<json>" under the
// entry's key (docs/cache.md, "On Redis").
inline void store_raw_json(const std::string& name, const std::string& key, const std::string& json) {
  redis_test::Raw raw(cache_suite_server().port());
  raw.cmd({"SET", "{weave:cache:" + name + ":" + key + "}", "1:" + json, "PX", "60000"});
}
