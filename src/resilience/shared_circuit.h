// One shared circuit breaker (CircuitBreakerPolicy::shared) as this process
// sees the fleet's: the phase last learned from the store (its replies and
// its change feed), the outcomes counted since the last report, and the
// steps that need the store (a probe place, a probe's end, a report).
//
// A closed call never waits for the store: it reads the cached phase and,
// when it ends, adds to the counts the flusher (ResilienceRuntime) reports
// every flush_interval. Open until its deadline, a call is refused at once;
// past it, or half-open, a call asks the store for a fleet-wide probe place
// (one ask at a time per process; after a refusal, none for a tenth of
// open_for, at most 100 ms, unless the phase changes meanwhile). When the
// store fails or its feed is not live, the phase is unknown (0) and the
// breaker's local state decides, until a report answers again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "core/process.h"
#include "resilience/circuit_store.h"
#include "weave/circuit_breaker.h"
#include "weave/resilience.h"

namespace WEAVE_NAMESPACE::detail {

// What admitting a call gave it: the phase it was let through in (0:
// refused), and for a shared probe its number (its owner in the store).
struct CircuitAdmission {
  std::uint64_t phase = 0;
  std::uint64_t probe = 0;
  bool fallback = false;  // (shared: the store is not answering; the local breaker decides)
  explicit operator bool() const noexcept { return phase != 0; }
};

class SharedCircuit {
 public:
  // A phase of the fleet's breaker, as a pass carries it (local ones never have it).
  static constexpr std::uint64_t kShared = std::uint64_t{1} << 63;

  SharedCircuit(std::string name, const CircuitBreakerPolicy& policy, std::string owner_prefix, EventHook hook);
  const std::string& name() const noexcept { return name_; }
  const CircuitBreakerPolicy& policy() const noexcept { return policy_; }

  // The fleet's phase (generation << 2 | state) as last learned, or 0 when
  // unknown: the local breaker decides.
  std::uint64_t phase() const noexcept { return phase_.load(std::memory_order_acquire); }
  // A call let through closed in `phase` ended (outcome as CircuitPass's).
  void count(std::uint64_t phase, int outcome, bool slow) noexcept;
  // An open breaker past its time, or a half-open one: a probe place from
  // the store (or closed again: a plain pass), else refused; `fallback`
  // when the store failed.
  CircuitAdmission ask(CircuitStore& store, std::uint64_t phase) noexcept;
  // How probe `probe`, let through in `phase`, ended.
  void probe_ended(CircuitStore& store, std::uint64_t phase, std::uint64_t probe, int outcome, bool slow) noexcept;

  // The flusher's turn: reports the counts (or, while the phase is unknown,
  // asks for it with an empty report).
  void flush(CircuitStore& store) noexcept;
  // A view from the store (a reply or the feed): taken unless older than
  // what is known.
  void learn(const SharedCircuitView& v) noexcept;
  // The feed may have missed a change: unknown until the next report.
  void lost() noexcept;

  std::chrono::milliseconds retry_after() const noexcept;
  std::uint64_t opened() const noexcept { return opened_.load(std::memory_order_relaxed); }
  std::uint64_t store_errors() const noexcept { return store_errors_.load(std::memory_order_relaxed); }

 private:
  void failed(const std::exception& e, const char* step) noexcept;
  // True the first time since the store last answered.
  bool mark_down() noexcept;
  std::string owner(std::uint64_t probe) const { return owner_prefix_ + std::to_string(probe); }

  const std::string name_;
  const CircuitBreakerPolicy policy_;
  const std::string owner_prefix_;
  const EventHook hook_;
  std::atomic<std::uint64_t> phase_{0};
  std::atomic<std::int64_t> open_until_ns_{0};  // steady_clock: open, when a probe may be asked for
  std::atomic<std::uint64_t> calls_{0}, failures_{0}, slows_{0};  // since the last report
  std::atomic<bool> asking_{false};
  // Half-open with every place taken: no ask before this (steady_clock ns;
  // a change of phase, told by the feed, ends it sooner).
  std::atomic<std::int64_t> next_ask_ns_{0};
  std::atomic<std::uint64_t> probes_{0};
  std::atomic<std::uint64_t> opened_{0}, store_errors_{0};
  Mutex mutex_;  // learning (and its events), in order
  std::uint64_t known_generation_ WEAVE_GUARDED_BY(mutex_) = 0;  // never goes back
  bool down_ WEAVE_GUARDED_BY(mutex_) = false;  // a store error told already (one event until it answers)
};

}  // namespace weave::detail
