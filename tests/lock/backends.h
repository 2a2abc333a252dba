// The backends the lock conformance suite runs against. Every TEMPLATE test
// in test_conformance.cpp runs once per type in WEAVE_LOCK_TEST_BACKENDS:
// adding a backend is one struct (url + available()) and one entry there.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace lock_test {

// A backend type for the suite: `url`, `available()`, `increments` (per
// thread in the 8-thread counter case: a networked backend pays a round trip
// per acquisition, so it may choose fewer) and `tune(options)` (e.g. a
// generous command timeout on a loaded CI machine).
struct MemBackend {
  static constexpr const char* url = "mem://conformance";
  static constexpr int increments = 10'000;
  static bool available() { return true; }
  static void tune(weave::LockOptions&) {}
};

// First line of every conformance test: a backend whose server cannot be
// started (e.g. no redis-server installed) fails the test. It used to pass
// with a warning, so a CI machine without redis-server reported the redis,
// redlock and cluster suites green while running none of them.
#define LOCK_TEST_REQUIRE_BACKEND()                                              \
  do {                                                                           \
    if (!TestType::available())                                                  \
      FAIL("backend " << TestType::url << " could not be started; test not run"); \
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

// Worker threads whose exceptions fail the test instead of terminating the
// process: join() waits for all of them and rethrows the first exception.
class Workers {
 public:
  Workers() = default;
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  void spawn(std::function<void()> body) {
    threads_.emplace_back([this, body = std::move(body)] {
      try {
        body();
      } catch (...) {
        std::lock_guard g(mutex_);
        if (!first_) first_ = std::current_exception();
      }
    });
  }
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    std::lock_guard g(mutex_);
    if (first_) std::rethrow_exception(std::exchange(first_, nullptr));
  }

 private:
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace lock_test
