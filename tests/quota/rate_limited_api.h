// Methods under [[rate_limit]], woven by weavegen, for the rate limit suite
// (test_rate_limit.cpp): one per on_limit policy, a per-argument key, and a
// limit stacked inside a lock.
#pragma once

#include <atomic>
#include <optional>
#include <string>

namespace quotas {

class Api {
 public:
  virtual ~Api() = default;

  // 2 at once per user, then one every 30 s: the third call throws RateLimited.
  [[rate_limit(key="api:<user>", rate=2/min, burst=2)]]
  virtual int handle([[maybe_unused]] const std::string& user, int request) {
    ++runs;
    return request * 2;
  }

  // One every 500 ms; a call waits for its turn, up to 2 s.
  [[rate_limit(key="mail:<tenant>", rate=2/s, burst=1, on_limit=wait, wait=2s)]]
  virtual void send(const std::string& tenant) {
    (void)tenant;
    ++runs;
  }

  // One an hour: a second call's turn is further off than its wait.
  [[rate_limit(key="report:<tenant>", rate=1/h, burst=1, on_limit=wait, wait=1s)]]
  virtual void report(const std::string& tenant) {
    (void)tenant;
    ++runs;
  }

  // Over the rate the method is skipped: the caller gets std::nullopt.
  [[rate_limit(key="poll:<source>", rate=1/h, on_limit=skip)]]
  virtual std::optional<int> poll(const std::string& source) {
    (void)source;
    ++runs;
    return 7;
  }

  // The key defaults to the method's qualified name.
  [[rate_limit(rate=3/10s)]]
  virtual int tick() { return ++runs; }

  // A limit inside a lock: the lock is taken first (lower order runs outer).
  [[lock(key="batch:<tenant>", order=1)]]
  [[rate_limit(key="batch:<tenant>", rate=1/h, order=2)]]
  virtual int batch(const std::string& tenant) {
    (void)tenant;
    return ++runs;
  }

  // A store that fails lets the call through.
  [[rate_limit(key="feed:<id>", rate=1/h, on_store_error=allow)]]
  virtual int feed(int id) {
    ++runs;
    return id;
  }

  std::atomic<int> runs{0};
};

}  // namespace quotas
