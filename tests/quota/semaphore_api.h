// Methods under [[semaphore]], woven by weavegen, for the semaphore suite
// (test_semaphore_annotation.cpp): a bounded export, a refusal, a skip, the
// permit seen from the body, and a default key.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "weave/semaphore.h"

namespace quotas {

class Exports {
 public:
  virtual ~Exports() = default;

  // At most 2 of a tenant at once; a caller waits up to 20 s. Returns how
  // many ran at once, counting itself, when it started.
  [[semaphore(key="export:<tenant>", permits=2, wait=20s)]]
  virtual int run([[maybe_unused]] const std::string& tenant, int ms) {
    const int now = ++inside;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    --inside;
    ++runs;
    return now;
  }

  // One at a time, not waiting: a second caller gets weave::SemaphoreBusy.
  [[semaphore(key="single:<tenant>", permits=1)]]
  virtual void single([[maybe_unused]] const std::string& tenant, std::atomic<bool>& started,
                      std::atomic<bool>& finish) {
    ++runs;
    started = true;
    while (!finish) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  // No permit: the method is skipped, the caller gets std::nullopt.
  [[semaphore(key="single:<tenant>", permits=1, on_busy=skip)]]
  virtual std::optional<int> maybe([[maybe_unused]] const std::string& tenant) {
    ++runs;
    return 7;
  }

  // The body sees the permit it runs under.
  [[semaphore(key="fenced:<tenant>", permits=1)]]
  virtual std::uint64_t token(const std::string& tenant) {
    const weave::SemaphorePermit* p = weave::current_permit("fenced:" + tenant);
    return p && p == weave::current_permit() && !p->lost() ? p->fencing_token() : 0;
  }

  // The key defaults to the method's qualified name.
  [[semaphore(permits=1)]]
  virtual int plain() { return ++runs; }

  std::atomic<int> runs{0}, inside{0}, most{0};
};

}  // namespace quotas
