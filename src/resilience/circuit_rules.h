// The arithmetic every circuit breaker decides by, kept in one place: the
// thresholds over a window's outcomes, and the half-open probes' verdict.
// The local breaker (circuit_state.h) and the shared one's store step
// (circuit_store.h) both call these.
#pragma once

#include <cstdint>

#include "weave/circuit_breaker.h"

namespace WEAVE_NAMESPACE::detail {

// A phase: the state and the generation it began (+ 1 at each change), in
// one word, generation << 2 | state; never 0 (generations start at 1).
inline std::uint64_t circuit_phase(std::uint64_t generation, CircuitState state) noexcept {
  return generation << 2 | static_cast<std::uint64_t>(state);
}
inline CircuitState circuit_phase_state(std::uint64_t phase) noexcept { return static_cast<CircuitState>(phase & 3); }
inline std::uint64_t circuit_phase_generation(std::uint64_t phase) noexcept { return phase >> 2; }

// Outcomes of calls in a window (or of a half-open phase's probes).
struct CircuitOutcomes {
  std::uint64_t calls = 0, failures = 0, slows = 0;
};

// At least `min_calls` calls, of which failure_rate % failed or (with
// slow_call) slow_call_rate % were slow.
inline bool circuit_over_threshold(const CircuitBreakerPolicy& p, const CircuitOutcomes& t,
                                   std::uint64_t min_calls) noexcept {
  if (t.calls == 0 || t.calls < min_calls) return false;
  if (t.failures * 100 >= static_cast<std::uint64_t>(p.failure_rate) * t.calls) return true;
  return p.slow_call.count() > 0 && t.slows * 100 >= static_cast<std::uint64_t>(p.slow_call_rate) * t.calls;
}

// What the probes that ended (`ended`) decide: open again once they reach
// a threshold of all half_open_calls probes (whatever the rest do), closed
// once all ended under it, else half-open still.
inline CircuitState circuit_probes_verdict(const CircuitBreakerPolicy& p, const CircuitOutcomes& ended) noexcept {
  if (circuit_over_threshold(p, {p.half_open_calls, ended.failures, ended.slows}, 1)) return CircuitState::open;
  if (ended.calls >= p.half_open_calls)
    return circuit_over_threshold(p, ended, 1) ? CircuitState::open : CircuitState::closed;
  return CircuitState::half_open;
}

}  // namespace weave::detail
