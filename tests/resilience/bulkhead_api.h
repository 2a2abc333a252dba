// Methods under [[bulkhead]], woven by weavegen, for test_bulkhead.cpp: a
// bulkhead of two with a wait, one without, one that skips, and two
// methods sharing one bulkhead by name.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace resilient {

class Api {
 public:
  virtual ~Api() = default;

  // Two at once; a third waits up to 2 s for a slot.
  [[bulkhead(max=2, wait=2s)]]
  virtual int work(const std::function<void()>& body) { return run(body); }

  // One at once, no waiting: a second throws weave::BulkheadFull.
  [[bulkhead(max=1)]]
  virtual int exclusive(const std::function<void()>& body) { return run(body); }

  // One at once; a second is skipped (std::nullopt).
  [[bulkhead(max=1, on_full=skip)]]
  virtual std::optional<int> optional(const std::function<void()>& body) { return run(body); }

  // Both share the bulkhead "shared" (one slot).
  [[bulkhead(name="shared", max=1, wait=50ms)]]
  virtual int left(const std::function<void()>& body) { return run(body); }
  [[bulkhead(name="shared", max=1)]]
  virtual int right(const std::function<void()>& body) { return run(body); }

  // Written after the lock, yet outside it: [[bulkhead]]'s default order
  // (-10) is lower than [[lock]]'s (0). A call that finds the bulkhead full
  // never asks for the lock.
  [[lock(key="stacked")]]
  [[bulkhead(max=1)]]
  virtual int stacked(const std::function<void()>& body) { return run(body); }

  std::atomic<int> runs{0};

 private:
  int run(const std::function<void()>& body) {
    if (body) body();
    return ++runs;
  }
};

}  // namespace resilient
