// One circuit breaker's state (weave/circuit_breaker.h): the phase (state
// and generation in one word), the closed window, the half-open probes.
//
// The closed path is lock-free: a pass reads the phase; an outcome adds to
// the window (a ring of the last calls, or ten time buckets read by a
// coarse clock) and, when it failed or was slow, sums the window to decide.
// Changes of state take the mutex, start a new generation and an empty
// window: outcomes of passes from another generation are dropped.
//
// A shared breaker (policy.shared) decides by the fleet's phase, which its
// SharedCircuit caches (resilience/shared_circuit.h); its passes carry
// SharedCircuit::kShared. While that phase is unknown (the store is down),
// the local state below decides.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/process.h"
#include "resilience/circuit_rules.h"
#include "resilience/shared_circuit.h"
#include "weave/circuit_breaker.h"

namespace WEAVE_NAMESPACE::detail {

class ResilienceRuntime;

class CircuitBreakerState {
 public:
  using NowNs = std::int64_t (*)() noexcept;
  // core's coarse_now() in ns (a few ns; ticks of a few ms): the window's
  // and open_for's clock.
  static std::int64_t coarse_now_ns() noexcept;

  // `now`: the clock (tests pass a fake one).
  CircuitBreakerState(std::string name, const CircuitBreakerPolicy& policy, NowNs now = &coarse_now_ns);

  // The phase a call is let through in, or none when refused.
  CircuitAdmission admit() noexcept;
  // A call let through by `a` ended: outcome 0 (nothing: cancelled), 1
  // (succeeded), 2 (failed); `slow` when it took slow_call or more.
  void record(const CircuitAdmission& a, int outcome, bool slow) noexcept;

  CircuitState state() const noexcept;
  std::chrono::milliseconds retry_after() const noexcept;
  const std::string& name() const noexcept { return name_; }
  const CircuitBreakerPolicy& policy() const noexcept { return policy_; }

  // Counts since the breaker was made (metrics, tests).
  struct Counts {
    std::atomic<std::uint64_t> succeeded{0}, failed{0}, slow{0}, refused{0}, opened{0};
    std::atomic<std::uint64_t> local{0};  // shared: decided by the local state (the store unreachable)
  };
  const Counts& counts() const noexcept { return counts_; }
  // The fleet's breaker (null unless policy.shared).
  const SharedCircuit* shared() const noexcept { return shared_; }

 private:
  struct Bucket {
    std::atomic<std::int64_t> epoch{-1};
    std::atomic<std::uint32_t> calls{0}, failures{0}, slows{0};
  };
  using Totals = CircuitOutcomes;
  void add_to_window(bool failed, bool slow) noexcept;
  Totals window_totals() const noexcept;
  void clear_window() noexcept WEAVE_REQUIRES(mutex_);
  CircuitAdmission admit_local() noexcept;
  // Moves from `from` to `to` unless another thread moved first.
  void move(std::uint64_t from, CircuitState to) noexcept;

  const std::string name_;
  const CircuitBreakerPolicy policy_;
  const NowNs now_;
  const std::int64_t bucket_ns_;  // time-based window: a tenth of it
  std::atomic<std::uint64_t> phase_;  // generation << 2 | state
  std::atomic<std::int64_t> open_until_ns_{0};
  // Count-based window: outcome codes (bit 0 a call, 1 failed, 2 slow).
  std::unique_ptr<std::atomic<std::uint8_t>[]> ring_;
  std::atomic<std::uint64_t> ring_next_{0};
  std::atomic<std::int64_t> ring_calls_{0}, ring_failures_{0}, ring_slows_{0};
  // Time-based window.
  Bucket buckets_[10];
  Mutex mutex_;  // changes of state, and the half-open probes below
  std::int64_t half_open_since_ns_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::uint32_t probes_out_ WEAVE_GUARDED_BY(mutex_) = 0;  // let through, not yet ended
  CircuitOutcomes probes_ended_ WEAVE_GUARDED_BY(mutex_);
  Counts counts_;
  // Shared: the runtime (its store) and the fleet's breaker it keeps.
  std::shared_ptr<ResilienceRuntime> runtime_;
  SharedCircuit* shared_ = nullptr;
};

}  // namespace weave::detail
