// resilience/shared_circuit.h: one shared breaker as this process sees it.
#include "resilience/shared_circuit.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "core/events.h"
#include "core/feature_runtime.h"
#include "weave/error.h"
#include "weave/event.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

std::uint64_t phase_of(const SharedCircuitView& v) noexcept { return circuit_phase(v.generation, v.state); }

}  // namespace

SharedCircuit::SharedCircuit(std::string name, const CircuitBreakerPolicy& policy, std::string owner_prefix,
                             EventHook hook)
    : name_(std::move(name)), policy_(policy), owner_prefix_(std::move(owner_prefix)), hook_(std::move(hook)) {}

void SharedCircuit::count(std::uint64_t phase, int outcome, bool slow) noexcept {
  if (outcome == 0 || phase_.load(std::memory_order_acquire) != phase) return;  // (let through before a change)
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (outcome == 2) failures_.fetch_add(1, std::memory_order_relaxed);
  if (slow) slows_.fetch_add(1, std::memory_order_relaxed);
}

CircuitAdmission SharedCircuit::ask(CircuitStore& store, std::uint64_t phase) noexcept {
  const std::int64_t now = steady_now_ns();
  if (circuit_phase_state(phase) == CircuitState::open && now < open_until_ns_.load(std::memory_order_acquire)) return {};
  if (circuit_phase_state(phase) == CircuitState::half_open && now < next_ask_ns_.load(std::memory_order_acquire)) return {};
  if (asking_.exchange(true, std::memory_order_acq_rel)) return {};  // another call of this process is asking
  const std::uint64_t probe = probes_.fetch_add(1, std::memory_order_relaxed) + 1;
  CircuitAdmission a;
  try {
    const SharedCircuitView v = store.probe(name_, policy_, owner(probe), policy_.open_for);
    learn(v);
    if (v.granted && v.state == CircuitState::closed) a.phase = phase_of(v) | kShared;
    if (v.granted && v.state == CircuitState::half_open) a = {phase_of(v) | kShared, probe};
    if (!v.granted && v.state == CircuitState::half_open) {  // every place is out: wait a little before asking again
      const auto pause = std::clamp<std::chrono::nanoseconds>(policy_.open_for / 10, std::chrono::milliseconds(1),
                                                              std::chrono::milliseconds(100));
      next_ask_ns_.store(steady_now_ns() + pause.count(), std::memory_order_release);
    }
  } catch (const std::exception& e) {
    failed(e, "ask for a probe place");
    a.fallback = true;
  }
  asking_.store(false, std::memory_order_release);
  return a;
}

void SharedCircuit::probe_ended(CircuitStore& store, std::uint64_t phase, std::uint64_t probe, int outcome,
                                bool slow) noexcept {
  try {
    learn(store.probe_end(name_, policy_, circuit_phase_generation(phase), owner(probe), outcome, slow));
  } catch (const std::exception& e) {
    failed(e, "end a probe");  // (its place comes back when its lease ends)
  }
}

void SharedCircuit::flush(CircuitStore& store) noexcept {
  if (!store.live()) {
    lost();
    if (mark_down()) {
      store_errors_.fetch_add(1, std::memory_order_relaxed);
      emit_notice(hook_, EventKind::circuit_store_error, "circuit_breaker", name_,
                  "shared circuit breaker '" + name_ +
                      "': the store's change feed is down or behind: each process decides on its local breaker "
                      "until it is back");
    }
    return;
  }
  const std::uint64_t phase = phase_.load(std::memory_order_acquire);
  CircuitOutcomes delta;
  std::uint64_t generation = 0;
  if (phase != 0) {
    delta.calls = calls_.exchange(0, std::memory_order_relaxed);
    delta.failures = failures_.exchange(0, std::memory_order_relaxed);
    delta.slows = slows_.exchange(0, std::memory_order_relaxed);
    if (delta.calls == 0) return;
    generation = circuit_phase_generation(phase);
  }
  try {
    learn(store.report(name_, policy_, generation, delta));  // (generation 0: counts nothing, answers the state)
  } catch (const std::exception& e) {
    failed(e, "report its calls");
  }
}

void SharedCircuit::learn(const SharedCircuitView& v) noexcept {
  bool changed = false;
  {
    Guard g(mutex_);
    if (v.generation < known_generation_) return;  // (an older reply, or a message overtaken)
    down_ = false;
    changed = known_generation_ != 0 && v.generation != known_generation_;  // (first news changes nothing here)
    if (v.state == CircuitState::open)
      open_until_ns_.store(steady_now_ns() + v.retry_after_ms * 1'000'000, std::memory_order_release);
    if (v.generation != known_generation_) {
      next_ask_ns_.store(0, std::memory_order_release);
      calls_.store(0, std::memory_order_relaxed);  // (counted in another phase)
      failures_.store(0, std::memory_order_relaxed);
      slows_.store(0, std::memory_order_relaxed);
    }
    known_generation_ = v.generation;
    phase_.store(phase_of(v), std::memory_order_release);
  }
  if (!changed) return;
  // A change the fleet made (outside the lock: the hook may ask anything).
  switch (v.state) {
    case CircuitState::open:
      opened_.fetch_add(1, std::memory_order_relaxed);
      emit_notice(hook_, EventKind::circuit_opened, "circuit_breaker", name_,
                  "shared circuit breaker '" + name_ + "' opened: calls are refused for " +
                      std::to_string(v.retry_after_ms) + " ms");
      break;
    case CircuitState::half_open:
      emit_notice(hook_, EventKind::circuit_half_open, "circuit_breaker", name_,
                  "shared circuit breaker '" + name_ + "' is half-open: it lets probes through (at most " +
                      std::to_string(policy_.half_open_calls) + " in the fleet)");
      break;
    case CircuitState::closed:
      emit_notice(hook_, EventKind::circuit_closed, "circuit_breaker", name_,
                  "shared circuit breaker '" + name_ + "' closed: its probes passed");
      break;
  }
}

void SharedCircuit::lost() noexcept { phase_.store(0, std::memory_order_release); }

bool SharedCircuit::mark_down() noexcept {
  Guard g(mutex_);
  return !std::exchange(down_, true);
}

void SharedCircuit::failed(const std::exception& e, const char* step) noexcept {
  store_errors_.fetch_add(1, std::memory_order_relaxed);
  lost();
  if (!mark_down()) return;
  report_event(hook_, EventKind::circuit_store_error, "circuit_breaker", name_, e,
               "shared circuit breaker '" + name_ + "' could not " + step +
                   ": each process decides on its local breaker until the store answers");
}

std::chrono::milliseconds SharedCircuit::retry_after() const noexcept {
  if (circuit_phase_state(phase()) != CircuitState::open) return std::chrono::milliseconds(0);
  const std::int64_t left = open_until_ns_.load(std::memory_order_acquire) - steady_now_ns();
  return std::chrono::milliseconds(left <= 0 ? 0 : (left + 999'999) / 1'000'000);
}

}  // namespace weave::detail
