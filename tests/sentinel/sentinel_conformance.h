// Force-included (-include) into tests/lock/test_conformance.cpp for the
// test_sentinel_conformance executable: the lock conformance suite against
// redis+sentinel:// (a master, a replica and three sentinels, started by the
// first available(), killed at exit).
#pragma once

#include <chrono>
#include <string>

#include "sentinel_fixture.h"
#include "weave/lock.h"

namespace sentinel_test {

struct ConformanceSentinel {
  static inline std::string url = "redis+sentinel://(not started)/m";
  static constexpr int increments = 500;
  static void tune(weave::LockOptions& o) { o.command_timeout = std::chrono::seconds(5); }
  static bool available() {
    static bool ok = [] {
      try {
        static Sentinels s;  // one per test process
        url = s.url();
        return true;
      } catch (const std::exception&) {
        return false;
      }
    }();
    return ok;
  }
};

}  // namespace sentinel_test

#define WEAVE_LOCK_TEST_BACKENDS sentinel_test::ConformanceSentinel
