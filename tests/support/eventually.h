// Polls a condition a test waits for, every millisecond up to a limit
// (generous: a loaded machine is slow, not wrong).
//
//   REQUIRE(test_support::eventually([&] { return seen == 3; }));
#pragma once

#include <chrono>
#include <thread>

namespace test_support {

// True once `done()` held, false if it still did not at `limit`.
template <class F>
bool eventually(F&& done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

}  // namespace test_support
