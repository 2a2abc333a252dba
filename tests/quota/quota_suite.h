// What the quota suite's cases share (test_rate_limit*.cpp,
// test_semaphore*.cpp, on the store under test).
//
//   quota_test::use_store();                                   // the process-wide quota store
//   const std::string key = quota_test::fresh_key("tenant");   // "tenant-<pid>-<n>": no other case's or run's
#pragma once

#include <unistd.h>

#include <atomic>
#include <string>

#include "weave/quota.h"

namespace quota_test {

inline std::string fresh_key(const std::string& what) {
  static std::atomic<int> n{0};
  return what + "-" + std::to_string(::getpid()) + "-" + std::to_string(n.fetch_add(1));
}

inline void use_store() { weave::configure_quota({.url = test_store_url()}); }

}  // namespace quota_test
