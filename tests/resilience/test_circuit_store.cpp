// A shared circuit breaker's store steps (src/resilience/circuit_store.h),
// on the store's clock given by hand: the fleet's outcomes in one window,
// fleet-wide probe places that a dead holder gives back at its lease's end,
// and generations that keep a report from before a change out.
#include <catch2/catch.hpp>

#include <chrono>

#include "resilience/circuit_store.h"

using namespace std::chrono_literals;
using weave::CircuitState;
using weave::detail::CircuitOutcomes;
using weave::detail::SharedCircuitRecord;
using weave::detail::shared_circuit_probe;
using weave::detail::shared_circuit_probe_end;
using weave::detail::shared_circuit_report;

namespace {
const weave::CircuitBreakerPolicy kPolicy{.failure_rate = 50, .window = 10s, .min_calls = 20, .open_for = 1s,
                                          .half_open_calls = 2};
constexpr int kSucceeded = 1, kFailed = 2, kNothing = 0;
}  // namespace

TEST_CASE("shared circuit: the fleet's reports add up in one window, which opens it") {
  SharedCircuitRecord r;
  auto a = shared_circuit_report(r, kPolicy, 1, {10, 3, 0}, 1'000);  // process A
  CHECK(a.state == CircuitState::closed);
  CHECK_FALSE(a.changed);
  auto b = shared_circuit_report(r, kPolicy, 1, {10, 8, 0}, 1'010);  // process B: 20 calls, 11 failed
  CHECK(b.state == CircuitState::open);
  CHECK(b.changed);
  CHECK(b.generation == 2);
  CHECK(b.retry_after_ms == 1'000);
  // A report counted while it was closed comes late: not counted, nothing changes.
  auto late = shared_circuit_report(r, kPolicy, 1, {5, 5, 0}, 1'020);
  CHECK(late.state == CircuitState::open);
  CHECK_FALSE(late.changed);
}

TEST_CASE("shared circuit: outcomes older than the window leave it") {
  SharedCircuitRecord r;
  shared_circuit_report(r, kPolicy, 1, {19, 19, 0}, 0);
  auto v = shared_circuit_report(r, kPolicy, 1, {1, 1, 0}, 11'000);  // the first 19 are past the 10 s window
  CHECK(v.state == CircuitState::closed);
  v = shared_circuit_report(r, kPolicy, 1, {19, 10, 0}, 11'500);  // 20 calls, 11 failed
  CHECK(v.state == CircuitState::open);
}

TEST_CASE("shared circuit: half_open_calls probe places for the whole fleet, and their verdict") {
  SharedCircuitRecord r;
  shared_circuit_report(r, kPolicy, 1, {20, 20, 0}, 0);
  REQUIRE(r.state == CircuitState::open);
  auto early = shared_circuit_probe(r, kPolicy, "a", 5'000, 999);
  CHECK_FALSE(early.granted);
  CHECK(early.retry_after_ms == 1);
  auto a = shared_circuit_probe(r, kPolicy, "a", 5'000, 1'000);  // open_for over: half-open
  CHECK(a.granted);
  CHECK(a.changed);
  CHECK(a.state == CircuitState::half_open);
  CHECK(shared_circuit_probe(r, kPolicy, "b", 5'000, 1'001).granted);
  CHECK_FALSE(shared_circuit_probe(r, kPolicy, "c", 5'000, 1'002).granted);  // both places out
  CHECK(shared_circuit_probe(r, kPolicy, "a", 5'000, 1'003).granted);        // its own, renewed
  // A probe ending with nothing gives its place back.
  shared_circuit_probe_end(r, kPolicy, a.generation, "b", kNothing, false, 1'004);
  CHECK(shared_circuit_probe(r, kPolicy, "c", 5'000, 1'005).granted);
  CHECK(shared_circuit_probe_end(r, kPolicy, a.generation, "a", kSucceeded, false, 1'006).state ==
        CircuitState::half_open);
  auto closed = shared_circuit_probe_end(r, kPolicy, a.generation, "c", kSucceeded, false, 1'007);
  CHECK(closed.state == CircuitState::closed);
  CHECK(closed.changed);
  CHECK(closed.generation == a.generation + 1);
  CHECK(shared_circuit_probe(r, kPolicy, "d", 5'000, 1'008).granted);  // closed: no probe needed
}

TEST_CASE("shared circuit: a failing probe opens it again at once") {
  SharedCircuitRecord r;
  shared_circuit_report(r, kPolicy, 1, {20, 20, 0}, 0);
  auto a = shared_circuit_probe(r, kPolicy, "a", 5'000, 1'000);
  REQUIRE(a.granted);
  auto v = shared_circuit_probe_end(r, kPolicy, a.generation, "a", kFailed, false, 1'010);  // 1 of 2: 50 %
  CHECK(v.state == CircuitState::open);
  CHECK(v.changed);
  CHECK(v.retry_after_ms == 1'000);
}

TEST_CASE("shared circuit: a dead probe's place comes back when its lease ends, and probes all out past open_for "
          "open it again") {
  SharedCircuitRecord r;
  shared_circuit_report(r, kPolicy, 1, {20, 20, 0}, 0);
  REQUIRE(shared_circuit_probe(r, kPolicy, "dead", 100, 1'000).granted);
  REQUIRE(shared_circuit_probe(r, kPolicy, "slow", 5'000, 1'000).granted);
  CHECK_FALSE(shared_circuit_probe(r, kPolicy, "c", 100, 1'050).granted);
  CHECK(shared_circuit_probe(r, kPolicy, "c", 5'000, 1'100).granted);  // "dead"'s lease ran out
  auto overdue = shared_circuit_probe(r, kPolicy, "d", 100, 2'000);   // both out since 1'000: open_for passed
  CHECK_FALSE(overdue.granted);
  CHECK(overdue.state == CircuitState::open);
  CHECK(overdue.changed);
}
