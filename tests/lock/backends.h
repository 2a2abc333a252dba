// The backends the lock conformance suite runs against. Every TEMPLATE_LIST
// test in test_conformance.cpp runs once per type in LockBackends: adding a
// backend is one struct and one entry in the tuple.
#pragma once

#include <atomic>
#include <random>
#include <string>
#include <tuple>

#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace lock_test {

struct MemBackend {
  static constexpr const char* url = "mem://conformance";
  static bool available() { return true; }
};

using LockBackends = std::tuple<MemBackend>;

// A key no other test (or earlier run against a shared server) uses.
inline std::string unique_key(const std::string& name) {
  static std::atomic<int> n{0};
  static const std::string run = std::to_string(std::random_device{}());
  return "weave-test:" + run + ":" + name + ":" + std::to_string(n.fetch_add(1));
}

}  // namespace lock_test
