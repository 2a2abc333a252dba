// The store a feature suite runs on (force-included: weave_add_store_suite):
// redis://, one redis-server for the executable on a free loopback port,
// started on first use and killed at exit.
#pragma once

#include <string>

#include "raw_write.h"
#include "redis_server.h"

#define WEAVE_TEST_STORE_IS_MEM 0

inline std::string test_store_url() {
  static redis_test::RedisServer server;
  return server.url();
}
