// Force-included (-include) into tests/lock/test_conformance.cpp for the
// test_redis_conformance executable: runs R's lock conformance suite against
// the redis backend, without editing tests/lock. One redis-server for the
// whole executable, started by the first available() (every conformance test
// calls it first) and killed at exit.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "weave/lock.h"

#include "redis_server.h"

namespace redis_test {

struct ConformanceRedis {
  static inline std::string url = "redis://(not started)";
  // One round trip per acquisition: 8 x 500 keeps the counter case short.
  static constexpr int increments = 500;
  // A loaded CI machine (2 cores, parallel builds) may stall the server for
  // longer than the 1 s default.
  static void tune(weave::LockOptions& o) { o.command_timeout = std::chrono::seconds(5); }
  static bool available() {
    static std::unique_ptr<RedisServer> server = [] {
      try {
        auto s = std::make_unique<RedisServer>();
        url = s->url();
        return s;
      } catch (const std::exception&) {
        return std::unique_ptr<RedisServer>();
      }
    }();
    return server != nullptr;
  }
};

}  // namespace redis_test

#define WEAVE_LOCK_TEST_BACKENDS redis_test::ConformanceRedis
