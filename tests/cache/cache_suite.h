// What the cache suite's sources (test_cache.cpp, test_cache_sync.cpp, one
// executable per store) share, and the names they use unqualified.
// test_store_url() is declared by tests/stores/store_under_test.h.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "cache_methods.h"
#include "weave/cache.h"

namespace cache_test {

// A cache name no other test of the executable uses (no spaces: the worker
// protocol splits on them).
inline std::string fresh_name(const std::string& what) {
  static std::atomic<int> n{0};
  return "t" + std::to_string(n.fetch_add(1)) + ":" + what;
}

// A generous feed_lag: on a loaded machine the feed's reader may run late,
// which costs local hits (asserted in test_cache.cpp), never correctness (the
// suite with real processes runs with the default).
inline void use_store() {
  weave::configure_cache({.url = test_store_url(), .feed_lag = std::chrono::seconds(5)});
}

}  // namespace cache_test

using cache_test::Catalog;
using cache_test::Find;
using cache_test::Found;
using cache_test::fresh_name;
using cache_test::use_store;
using namespace std::chrono_literals;
