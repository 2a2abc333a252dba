// A small fixed thread pool that runs one task per master in parallel and
// waits for all of them: every redlock request reaches all masters at once.
#pragma once

#include "weave/abi.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/process.h"

namespace WEAVE_NAMESPACE::store {

class FanOut {
 public:
  explicit FanOut(int threads);
  ~FanOut();
  FanOut(const FanOut&) = delete;
  FanOut& operator=(const FanOut&) = delete;

  // Runs task(0) ... task(n-1) concurrently (task(0) on the calling thread)
  // and returns when all have finished. Tasks must not throw.
  void run(std::size_t n, const std::function<void(std::size_t)>& task);

 private:
  struct Batch;
  void work();

  detail::Mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_ WEAVE_GUARDED_BY(mutex_);
  bool stop_ WEAVE_GUARDED_BY(mutex_) = false;
  std::vector<detail::OwnedThread> threads_;
};

}  // namespace weave::store
