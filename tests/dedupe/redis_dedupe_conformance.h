// The dedupe suite (test_dedupe.cpp) on redis://: one redis-server for the
// executable, started on first use on a free loopback port, killed at exit.
#pragma once

#include <string>

#include "redis_server.h"
#include "store/open.h"

#define WEAVE_DEDUPE_STORE_HOLDS_TEXT 1

inline redis_test::RedisServer& dedupe_suite_server() {
  static redis_test::RedisServer server;
  return server;
}

inline std::string dedupe_store_url() { return dedupe_suite_server().url(); }

// Writes a record's text the way another program would.
inline void store_raw_record(const std::string& key, const std::string& text) {
  auto exec = weave::store::open_executor(dedupe_store_url(), {});
  const std::string k = "{weave:dedupe:" + key + "}";
  exec->command(weave::store::Command{"SET", k, text, "PX", "60000"}, k, "test write");
}
