// Force-included (-include) into tests/lock/test_conformance.cpp for the
// test_redlock_conformance executable: the lock conformance suite against
// redlock:// over 3 private masters, started by the first available() and
// killed at exit.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "masters.h"
#include "weave/lock.h"

namespace redlock_test {

struct ConformanceRedlock {
  static inline std::string url = "redlock://(not started)";
  // A parallel round trip to 3 masters per acquisition: 8 x 300.
  static constexpr int increments = 300;
  static void tune(weave::LockOptions& o) { o.command_timeout = std::chrono::seconds(5); }
  static bool available() {
    static std::unique_ptr<Masters> masters = [] {
      try {
        auto m = std::make_unique<Masters>(3);
        url = m->url();
        return m;
      } catch (const std::exception&) {
        return std::unique_ptr<Masters>();
      }
    }();
    return masters != nullptr;
  }
};

}  // namespace redlock_test

#define WEAVE_LOCK_TEST_BACKENDS redlock_test::ConformanceRedlock
