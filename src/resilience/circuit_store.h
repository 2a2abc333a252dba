// A shared circuit breaker's record, as its store keeps it, and the steps
// on it: the state every process of the fleet sees. A process reports its
// batched outcomes (report), asks for a fleet-wide probe place when the
// breaker is half-open (probe), and says how its probe ended (probe_end).
// Each step first moves the record on by the store's clock (an open breaker
// becomes half-open at open_until; expired probe leases give their places
// back; probes all out for open_for open it again), then applies itself.
// Times are the store's, in ms. mem:// runs these steps in the process
// (circuit_mem.cpp); Redis runs their exact mirror, one script per step in
// the record's slot (scripts/circuit_*.lua), on the server's clock.
//
// A CircuitStore (below) serves the steps by breaker name and tells every
// process of the changes any step made.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "resilience/circuit_rules.h"
#include "weave/circuit_breaker.h"

namespace WEAVE_NAMESPACE::detail {

struct SharedCircuitRecord {
  CircuitState state = CircuitState::closed;
  // + 1 at each change of state. A record the store makes starts at its
  // clock's ms (fresh_shared_circuit()): one made again after the old one
  // expired still counts on from where any process may have seen it.
  std::uint64_t generation = 1;
  std::int64_t open_until_ms = 0;       // open: when probes may start
  std::int64_t half_open_since_ms = 0;  // half-open: since when
  // Closed: the window, ten buckets of window / 10 keyed by now / bucket.
  std::map<std::int64_t, CircuitOutcomes> buckets;
  // Half-open: probes out (owner -> lease expiry), and those that ended.
  std::map<std::string, std::int64_t, std::less<>> probes;
  CircuitOutcomes probes_ended;
};

// What a step answers.
struct SharedCircuitView {
  CircuitState state = CircuitState::closed;
  std::uint64_t generation = 1;
  std::int64_t retry_after_ms = 0;  // open: until probes may start
  bool granted = false;             // probe: a place is the caller's (or closed: no probe needed)
  bool changed = false;             // the step changed the state: publish it
};

// A record the store makes at `now` (ms).
inline SharedCircuitRecord fresh_shared_circuit(std::int64_t now) {
  SharedCircuitRecord r;
  r.generation = static_cast<std::uint64_t>(std::max<std::int64_t>(1, now));
  return r;
}

// How long a store keeps a record no step touched: every bucket and every
// open or half-open phase has ended by then.
inline std::int64_t shared_circuit_idle_ms(const CircuitBreakerPolicy& p) {
  return 2 * (p.window.count() + p.open_for.count()) + 60'000;
}

namespace shared_circuit {

inline std::int64_t bucket_ms(const CircuitBreakerPolicy& p) { return std::max<std::int64_t>(1, p.window.count() / 10); }

inline void enter(SharedCircuitRecord& r, const CircuitBreakerPolicy& p, CircuitState to, std::int64_t now) {
  r.state = to;
  ++r.generation;
  r.buckets.clear();
  r.probes.clear();
  r.probes_ended = {};
  if (to == CircuitState::open) r.open_until_ms = now + p.open_for.count();
  if (to == CircuitState::half_open) r.half_open_since_ms = now;
}

inline SharedCircuitView view(const SharedCircuitRecord& r, std::int64_t now, bool changed) {
  SharedCircuitView v;
  v.state = r.state;
  v.generation = r.generation;
  v.retry_after_ms = r.state == CircuitState::open ? std::max<std::int64_t>(0, r.open_until_ms - now) : 0;
  v.changed = changed;
  return v;
}

// The record moved on to `now`; true when its state changed.
inline bool advance(SharedCircuitRecord& r, const CircuitBreakerPolicy& p, std::int64_t now) {
  if (r.state == CircuitState::open && now >= r.open_until_ms) {
    enter(r, p, CircuitState::half_open, now);
    return true;
  }
  if (r.state != CircuitState::half_open) return false;
  for (auto it = r.probes.begin(); it != r.probes.end();)  // a dead holder's place comes back
    it = it->second <= now ? r.probes.erase(it) : std::next(it);
  const bool all_out = r.probes.size() + r.probes_ended.calls >= p.half_open_calls && !r.probes.empty();
  if (all_out && now - r.half_open_since_ms >= p.open_for.count()) {  // overdue, as the local breaker
    enter(r, p, CircuitState::open, now);
    return true;
  }
  return false;
}

}  // namespace shared_circuit

// A process's outcomes since its last report, counted while it saw
// `generation`: added to the window when the breaker is still closed in it.
inline SharedCircuitView shared_circuit_report(SharedCircuitRecord& r, const CircuitBreakerPolicy& p,
                                               std::uint64_t generation, const CircuitOutcomes& delta,
                                               std::int64_t now) {
  bool changed = shared_circuit::advance(r, p, now);
  if (r.state == CircuitState::closed && generation == r.generation && delta.calls > 0) {
    const std::int64_t bucket = now / shared_circuit::bucket_ms(p);
    CircuitOutcomes& b = r.buckets[bucket];
    b.calls += delta.calls;
    b.failures += delta.failures;
    b.slows += delta.slows;
    r.buckets.erase(r.buckets.begin(), r.buckets.upper_bound(bucket - 10));
    CircuitOutcomes total;
    for (const auto& [_, o] : r.buckets) {
      total.calls += o.calls;
      total.failures += o.failures;
      total.slows += o.slows;
    }
    if ((delta.failures > 0 || delta.slows > 0) && circuit_over_threshold(p, total, p.min_calls)) {
      shared_circuit::enter(r, p, CircuitState::open, now);
      changed = true;
    }
  }
  return shared_circuit::view(r, now, changed);
}

// A probe place for `owner` (held until now + lease_ms unless it ends
// first): granted while half-open with a place left, or when closed.
inline SharedCircuitView shared_circuit_probe(SharedCircuitRecord& r, const CircuitBreakerPolicy& p,
                                              std::string_view owner, std::int64_t lease_ms, std::int64_t now) {
  const bool changed = shared_circuit::advance(r, p, now);
  SharedCircuitView v = shared_circuit::view(r, now, changed);
  if (r.state == CircuitState::closed) {
    v.granted = true;
  } else if (r.state == CircuitState::half_open) {
    if (auto it = r.probes.find(owner); it != r.probes.end()) {
      it->second = now + lease_ms;
      v.granted = true;
    } else if (r.probes.size() + r.probes_ended.calls < p.half_open_calls) {
      r.probes.emplace(std::string(owner), now + lease_ms);
      v.granted = true;
    }
  }
  return v;
}

// How `owner`'s probe of `generation` ended: 0 nothing (its place back),
// 1 succeeded, 2 failed; `slow` when it took slow_call or more.
inline SharedCircuitView shared_circuit_probe_end(SharedCircuitRecord& r, const CircuitBreakerPolicy& p,
                                                  std::uint64_t generation, std::string_view owner, int outcome,
                                                  bool slow, std::int64_t now) {
  bool changed = shared_circuit::advance(r, p, now);
  const auto it = r.probes.find(owner);
  if (r.state == CircuitState::half_open && generation == r.generation && it != r.probes.end()) {
    r.probes.erase(it);
    if (outcome != 0) {
      ++r.probes_ended.calls;
      if (outcome == 2) ++r.probes_ended.failures;
      if (slow) ++r.probes_ended.slows;
      const CircuitState next = circuit_probes_verdict(p, r.probes_ended);
      if (next != CircuitState::half_open) {
        shared_circuit::enter(r, p, next, now);
        changed = true;
      }
    }
  }
  return shared_circuit::view(r, now, changed);
}

// A change as the store publishes it: "<state> <generation>
// <retry_after_ms> <name>" (the name last: it may hold spaces).
inline std::string encode_circuit_change(std::string_view name, const SharedCircuitView& v) {
  return std::to_string(static_cast<int>(v.state)) + " " + std::to_string(v.generation) + " " +
         std::to_string(v.retry_after_ms) + " " + std::string(name);
}
struct CircuitChange {
  std::string name;
  SharedCircuitView view;
};
// nullopt for a message that is not one.
std::optional<CircuitChange> decode_circuit_change(std::string_view payload);

class CircuitStore {
 public:
  virtual ~CircuitStore() = default;
  // The steps above on the record of breaker `name` (made fresh when the
  // store has none). Throw IoError (and its kinds) or ReplyError when the
  // store fails.
  virtual SharedCircuitView report(std::string_view name, const CircuitBreakerPolicy& p, std::uint64_t generation,
                                   const CircuitOutcomes& delta) = 0;
  virtual SharedCircuitView probe(std::string_view name, const CircuitBreakerPolicy& p, std::string_view owner,
                                  std::chrono::milliseconds lease) = 0;
  virtual SharedCircuitView probe_end(std::string_view name, const CircuitBreakerPolicy& p, std::uint64_t generation,
                                      std::string_view owner, int outcome, bool slow) = 0;

  struct Handlers {
    // A step (of any process) changed breaker `name`'s state.
    std::function<void(std::string_view name, const SharedCircuitView& view)> on_change;
    // The feed may have missed changes: it went down (live() is false
    // already), or it came up again (live() is true).
    std::function<void()> on_down, on_up;
  };
  // Hands every change from now on to `handlers`, on a thread of the
  // store's: quick, never calling back into the store. Once, before any step.
  virtual void watch(Handlers handlers) = 0;
  // Every change made since the feed last came up has been handed over
  // (within the options' feed_lag).
  virtual bool live() const noexcept = 0;
};

// mem://[table]: the records shared by every resilience store of the same
// URL in this process (its clock: steady_clock).
std::shared_ptr<CircuitStore> make_mem_circuits(std::string_view table);

}  // namespace weave::detail
