// The running call's stop token (weave::current_stop_token()) and the
// deadlines that fire it ([[timeout]], weave::timeout(): weave/timeout.h).
//
// A deadline scope pushes a link of kind `deadline` on the call's context.
// Nothing is armed until someone asks for the token: then the deadline's
// StopJoin follows the token outside the scope and DeadlineTimer's one
// thread stops it at the deadline. A call that never asks pays for a clock
// read at each end and its link.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stop_token>
#include <utility>

#include "core/call_context.h"
#include "core/process.h"
#include "core/stop_join.h"

namespace WEAVE_NAMESPACE::detail {

// One thread per process that stops sources at their times.
class DeadlineTimer final : public BackgroundThread {
 public:
  using Clock = std::chrono::steady_clock;
  struct Armed {
    Clock::time_point at{};
    std::uint64_t id = 0;  // 0: not armed
  };
  static DeadlineTimer& instance() { return process_wide<DeadlineTimer>(); }
  // Stops `source` at `at` (at once if it passed), unless disarmed first.
  Armed arm(Clock::time_point at, std::stop_source source);
  void disarm(const Armed& armed);
  // Armed and not yet fired (tests).
  std::size_t size();

 private:
  friend DeadlineTimer& process_wide<DeadlineTimer>();
  DeadlineTimer() : BackgroundThread("weave-deadline") {}
  void run() override;
  void forget_in_child() override WEAVE_NO_THREAD_SAFETY_ANALYSIS;
  std::map<std::pair<Clock::time_point, std::uint64_t>, std::stop_source> due_ WEAVE_GUARDED_BY(mutex_);
  std::uint64_t last_id_ WEAVE_GUARDED_BY(mutex_) = 0;
};

// A deadline scope's state, in its context link.
class CallDeadline {
 public:
  using Clock = DeadlineTimer::Clock;
  // At `at`, or (`start_ticks` not 0: a scope timed by the cycle clock)
  // `after` past the counter's `start_ticks`.
  CallDeadline(Clock::time_point at, std::int64_t start_ticks, std::chrono::milliseconds after) noexcept
      : at_(at), start_ticks_(start_ticks), after_(after) {}
  ~CallDeadline();
  CallDeadline(const CallDeadline&) = delete;
  CallDeadline& operator=(const CallDeadline&) = delete;

  // Someone asked for its token: it is armed.
  bool asked() const noexcept { return asked_.load(std::memory_order_acquire); }
  // The deadline on steady_clock, once asked(): the time the token fires.
  Clock::time_point at() const noexcept { return at_; }
  // Stops at the deadline or when the call's token outside the scope
  // (`outside`, the link's parent) does. The first ask arms the timer.
  std::stop_token token(const ContextLink* outside) const;

 private:
  // (A cycle-clock scope's own steady_clock deadline is worked out at the
  // first ask, before asked_ publishes it.)
  mutable Clock::time_point at_;
  const std::int64_t start_ticks_;
  const std::chrono::milliseconds after_;
  mutable Mutex mutex_;
  mutable std::unique_ptr<StopJoin> join_ WEAVE_GUARDED_BY(mutex_);
  mutable DeadlineTimer::Armed armed_ WEAVE_GUARDED_BY(mutex_);
  mutable std::atomic<bool> asked_{false};  // join_ made: the destructor disarms
};

// The stop token of a call whose context's innermost link is `head`.
std::stop_token call_stop_token(const ContextLink* head);

}  // namespace weave::detail
