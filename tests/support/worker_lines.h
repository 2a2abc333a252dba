// What a worker program a test drives through stdin and stdout lines
// (lock_worker, semaphore_worker, circuit_worker, ...) needs to answer:
//
//   say("HELD " + std::to_string(token));      // one line, flushed at once
//   say("AT " + std::to_string(monotonic_ns()));
#pragma once

#include <time.h>

#include <iostream>
#include <mutex>
#include <string>

// One whole line on stdout, flushed (threads of the worker may say at once).
inline void say(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard g(mutex);
  std::cout << line << '\n' << std::flush;
}

// CLOCK_MONOTONIC in ns: the same clock in every process of the host, so a
// test compares the times its workers report.
inline long long monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}
