// Helpers shared by the lock tests: unique keys, and worker threads whose
// exceptions fail the test.
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
