// A service whose dedupe key joins two arguments, woven by weavegen, for the
// dedupe suite (test_dedupe.cpp).
#pragma once

#include <atomic>
#include <string>

namespace users {

class Payments {
 public:
  virtual ~Payments() = default;

  [[dedupe(key="pay:<user>:<idempotency_key>", window=1min, on_duplicate=replay)]]
  virtual std::string pay(const std::string& user, const std::string& idempotency_key) {
    ++runs;
    return user + "|" + idempotency_key;
  }

  std::atomic<int> runs{0};
};

}  // namespace users
