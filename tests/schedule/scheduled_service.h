// Woven [[scheduled]] methods for test_scheduled.cpp, one class per
// behaviour (a DelayWorker serves every schedule of the object it is
// given): each method records the ticks it ran, from current_tick() or its
// parameter.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "weave/lease.h"
#include "weave/tick.h"

namespace scheduletest {

struct Ran {
  weave::Tick tick;
  bool locked = false;  // a lease of the [[lock]] below was held
  std::chrono::steady_clock::time_point at;
};

class Recorder {
 public:
  std::vector<Ran> ran() {
    std::lock_guard g(mutex_);
    return ran_;
  }
  std::atomic<int> running{0}, most_running{0};

 protected:
  void note(const weave::Tick& t) {
    std::lock_guard g(mutex_);
    ran_.push_back({t, weave::current_lease() != nullptr, std::chrono::steady_clock::now()});
  }
  void note_and_sleep(std::chrono::milliseconds d) {
    const int now = ++running;
    for (int m = most_running.load(); now > m && !most_running.compare_exchange_weak(m, now);) {
    }
    note(*weave::current_tick());
    std::this_thread::sleep_for(d);
    --running;
  }

 private:
  std::mutex mutex_;
  std::vector<Ran> ran_;
};

class Beat : public Recorder {
 public:
  virtual ~Beat() = default;
  [[scheduled(every=200ms, name="beat")]]
  [[lock(key="scheduled:beat", ttl=5s, wait=5s)]]
  virtual void beat() { note(*weave::current_tick()); }
};

class SkipMissed : public Recorder {
 public:
  virtual ~SkipMissed() = default;
  [[scheduled(every=200ms, grace=50ms, name="skip-missed")]]
  virtual void run(const weave::Tick& tick) { note(tick); }
};

class OnceMissed : public Recorder {
 public:
  virtual ~OnceMissed() = default;
  [[scheduled(every=200ms, grace=50ms, misfire=run_once, name="once-missed")]]
  virtual void run(weave::Tick tick) { note(tick); }
};

class AllMissed : public Recorder {
 public:
  virtual ~AllMissed() = default;
  [[scheduled(every=200ms, grace=50ms, misfire=run_all, max_catch_up=3, name="all-missed")]]
  virtual void run() { note(*weave::current_tick()); }
};

// Throws on each tick's first attempt.
class Flaky : public Recorder {
 public:
  virtual ~Flaky() = default;
  [[scheduled(every=300ms, retries=2, backoff=10ms, name="flaky")]]
  virtual void run() {
    const weave::Tick t = *weave::current_tick();
    note(t);
    if (t.attempt == 1) throw std::runtime_error("first attempts fail");
  }
};

class Pausable : public Recorder {
 public:
  virtual ~Pausable() = default;
  [[scheduled(every=100ms, grace=50ms, name="pausable")]]
  virtual void run() { note(*weave::current_tick()); }
};

// Throws text that is not UTF-8 on every attempt, once.
class Garbled : public Recorder {
 public:
  virtual ~Garbled() = default;
  [[scheduled(every=100ms, retries=0, name="garbled")]]
  virtual void run() {
    note(*weave::current_tick());
    if (ran().size() == 1) throw std::runtime_error("caf\xe9 \xff\xfe");
  }
};

// Each runs 250 ms on a 100 ms period.
class LongSkip : public Recorder {
 public:
  virtual ~LongSkip() = default;
  [[scheduled(every=100ms, grace=30ms, name="long-skip")]]
  virtual void run() { note_and_sleep(std::chrono::milliseconds(250)); }
};
class LongWait : public Recorder {
 public:
  virtual ~LongWait() = default;
  [[scheduled(every=100ms, grace=30ms, overlap=wait, name="long-wait")]]
  virtual void run() { note_and_sleep(std::chrono::milliseconds(250)); }
};
class LongAllow : public Recorder {
 public:
  virtual ~LongAllow() = default;
  [[scheduled(every=100ms, grace=30ms, overlap=allow, name="long-allow")]]
  virtual void run() { note_and_sleep(std::chrono::milliseconds(250)); }
};

}  // namespace scheduletest
