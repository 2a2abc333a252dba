// The backends the lock conformance suite runs against. Every TEMPLATE test
// in test_conformance.cpp runs once per type in WEAVE_LOCK_TEST_BACKENDS:
// adding a backend is one struct (url + available()) and one entry there.
#pragma once

#include <atomic>
#include <random>
#include <string>

#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace lock_test {

struct MemBackend {
  static constexpr const char* url = "mem://conformance";
  static bool available() { return true; }
};

// First line of every conformance test: a backend whose server is not
// reachable (e.g. no redis-server running) passes with a warning.
#define LOCK_TEST_REQUIRE_BACKEND()                                              \
  do {                                                                           \
    if (!TestType::available()) {                                                \
      WARN("backend " << TestType::url << " not available; test not run");       \
      return;                                                                    \
    }                                                                            \
  } while (0)

#ifndef WEAVE_LOCK_TEST_BACKENDS
#define WEAVE_LOCK_TEST_BACKENDS lock_test::MemBackend
#endif

// A key no other test (or earlier run against a shared server) uses.
inline std::string unique_key(const std::string& name) {
  static std::atomic<int> n{0};
  static const std::string run = std::to_string(std::random_device{}());
  return "weave-test:" + run + ":" + name + ":" + std::to_string(n.fetch_add(1));
}

}  // namespace lock_test
