// A bulkhead's slots and its line of waiters, shared by weave::Bulkhead,
// its slots, and the [[bulkhead]] interceptors: a slot given back goes to
// the first waiter in line directly (FIFO, no barging).
//
//   BulkheadState::Waiter w;                    // on the waiting caller's stack
//   if (state->enter_or_queue(w)) ...           // a slot now, else in line
//   state->wait(w, deadline);                   // a thread waits (or: w.wake = notify, a coroutine waits)
//   if (!state->granted_or_leave(w)) ...        // none came: out of line
//   state->release();                           // to the first waiter, else one slot fewer held
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "core/process.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// The most slots a bulkhead may have (annotations/bulkhead.json says the same).
inline constexpr std::uint32_t kMaxBulkheadSlots = 1'000'000;

class BulkheadState : public std::enable_shared_from_this<BulkheadState> {
 public:
  using Clock = std::chrono::steady_clock;
  BulkheadState(std::string name, std::uint32_t max) : name_(std::move(name)), max_(max) {}

  struct Waiter {
    bool granted = false;  // (under the state's mutex)
    // Called (under the state's mutex, so quick) when a release grants this
    // waiter its slot: a coroutine's wake-up (wait() sets its own).
    std::function<void()> wake;
  };
  // A slot for a caller when one is free and nobody waits (true); else, with
  // `queue`, the caller's waiter goes in line.
  bool enter_or_queue(Waiter& w, bool queue);
  // Blocks the thread until `w` is granted or `deadline`.
  void wait(Waiter& w, Clock::time_point deadline);
  // True when `w` was granted its slot; otherwise takes it out of line
  // (counted full, unless the caller `gave_up`: a cancelled coroutine).
  bool granted_or_leave(Waiter& w, bool gave_up = false);
  // Gives a slot back: to the first waiter in line, else held no more.
  void release() noexcept;

  const std::string& name() const noexcept { return name_; }
  std::uint32_t max() const noexcept { return max_; }
  std::uint32_t running() const;
  std::uint32_t waiting() const;

  // Since the bulkhead was made (weave_bulkhead_* metrics): slots taken, of
  // which after a wait, and calls that found none within their wait.
  struct Counts {
    std::uint64_t entered = 0, waited = 0, full = 0;
    std::uint32_t running = 0, waiting = 0;
  };
  Counts counts() const;

 private:
  const std::string name_;
  const std::uint32_t max_;
  mutable Mutex mutex_;
  std::uint32_t running_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::list<Waiter*> line_ WEAVE_GUARDED_BY(mutex_);
  std::uint64_t entered_ WEAVE_GUARDED_BY(mutex_) = 0, waited_ WEAVE_GUARDED_BY(mutex_) = 0,
                full_ WEAVE_GUARDED_BY(mutex_) = 0;
};

}  // namespace weave::detail
