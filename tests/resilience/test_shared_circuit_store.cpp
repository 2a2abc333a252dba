// Every shared circuit breakers' store (mem:// and the Redis URLs) runs the
// steps of src/resilience/circuit_store.h alike, on its own clock: the same
// sequences give the same answers, and every store of the URL (another
// process's) hears of each change.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/unique_token.h"
#include "resilience/resilience_runtime.h"

using namespace std::chrono_literals;
using weave::CircuitState;
using weave::detail::CircuitStore;
using weave::detail::SharedCircuitView;

namespace {

constexpr int kSucceeded = 1, kFailed = 2, kNothing = 0;

weave::ResilienceOptions options() {
  weave::ResilienceOptions o;
  o.url = test_store_url();
  o.key_prefix = "weave:test:" + weave::detail::unique_token() + ":";  // (under the ACL suite's patterns)
  return o;
}

weave::CircuitBreakerPolicy policy() {
  return {.failure_rate = 50, .window = 10s, .min_calls = 20, .open_for = 300ms, .half_open_calls = 2, .shared = true};
}

// The changes a store hears of, by breaker name.
struct Heard {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::pair<std::string, SharedCircuitView>> changes;
  CircuitStore::Handlers handlers() {
    return {.on_change = [this](std::string_view name, const SharedCircuitView& v) {
              {
                std::lock_guard g(mutex);
                changes.emplace_back(std::string(name), v);
              }
              cv.notify_all();
            },
            .on_down = {},
            .on_up = {}};
  }
  // The first change of `name` to `state` heard within 5 s.
  std::optional<SharedCircuitView> wait_for(const std::string& name, CircuitState state) {
    std::unique_lock g(mutex);
    std::optional<SharedCircuitView> found;
    cv.wait_for(g, 5s, [&] {
      for (const auto& [n, v] : changes)
        if (n == name && v.state == state) found = v;
      return found.has_value();
    });
    return found;
  }
};

// A breaker `what`-<token> that `s` has just opened (20 calls, all failed).
std::string opened_breaker(CircuitStore& s, const std::string& what) {
  const std::string name = what + "-" + weave::detail::unique_token();
  const std::uint64_t g = s.report(name, policy(), 0, {}).generation;
  REQUIRE(s.report(name, policy(), g, {20, 20, 0}).state == CircuitState::open);
  return name;
}

}  // namespace

TEST_CASE("shared circuit store: two processes' reports add up to open it, and the other hears of it") {
  const weave::ResilienceOptions o = options();
  Heard heard;  // (first: it outlives the store whose feed calls it)
  auto a = weave::detail::open_circuit_store(o), b = weave::detail::open_circuit_store(o);
  b->watch(heard.handlers());
  const std::string name = "psp " + weave::detail::unique_token();  // (a name may hold spaces)
  const SharedCircuitView first = a->report(name, policy(), 0, {});  // (generation 0: asks for the state)
  CHECK(first.state == CircuitState::closed);
  CHECK(first.generation > 1);  // (a fresh record counts from the store's clock)
  CHECK_FALSE(first.changed);
  const SharedCircuitView half = a->report(name, policy(), first.generation, {10, 3, 0});
  CHECK(half.state == CircuitState::closed);
  CHECK(half.generation == first.generation);
  const SharedCircuitView opened = b->report(name, policy(), first.generation, {10, 8, 0});  // 20 calls, 11 failed
  CHECK(opened.state == CircuitState::open);
  CHECK(opened.changed);
  CHECK(opened.generation == first.generation + 1);
  CHECK(opened.retry_after_ms > 200);
  CHECK(opened.retry_after_ms <= 300);
  const auto told = heard.wait_for(name, CircuitState::open);
  REQUIRE(told);
  CHECK(told->generation == opened.generation);
  // A report counted in the closed phase, arriving late: not counted.
  const SharedCircuitView late = a->report(name, policy(), first.generation, {5, 5, 0});
  CHECK(late.state == CircuitState::open);
  CHECK_FALSE(late.changed);
}

TEST_CASE("shared circuit store: a stale generation's outcomes and a window under min_calls leave it closed") {
  const weave::ResilienceOptions o = options();
  auto a = weave::detail::open_circuit_store(o);
  const std::string name = "window-" + weave::detail::unique_token();
  const std::uint64_t generation = a->report(name, policy(), 0, {}).generation;
  CHECK(a->report(name, policy(), generation, {19, 19, 0}).state == CircuitState::closed);  // under min_calls
  CHECK(a->report(name, policy(), generation - 1, {10, 10, 0}).state == CircuitState::closed);  // another generation's
  CHECK(a->report(name, policy(), generation, {1, 0, 0}).state == CircuitState::closed);  // 20 calls, 19 failed: no new failure
  CHECK(a->report(name, policy(), generation, {1, 1, 0}).state == CircuitState::open);
}

TEST_CASE("shared circuit store: half_open_calls probe places across processes, then their verdict closes it") {
  const weave::ResilienceOptions o = options();
  Heard heard;  // (first: it outlives the store whose feed calls it)
  auto a = weave::detail::open_circuit_store(o), b = weave::detail::open_circuit_store(o);
  b->watch(heard.handlers());
  const std::string name = opened_breaker(*a, "probes");
  const SharedCircuitView early = b->probe(name, policy(), "b1", 5s);
  CHECK_FALSE(early.granted);
  CHECK(early.state == CircuitState::open);
  std::this_thread::sleep_for(350ms);
  const SharedCircuitView pa = a->probe(name, policy(), "a1", 5s);
  CHECK(pa.granted);
  CHECK(pa.state == CircuitState::half_open);
  CHECK(pa.changed);
  CHECK(heard.wait_for(name, CircuitState::half_open));
  CHECK(b->probe(name, policy(), "b1", 5s).granted);
  CHECK_FALSE(b->probe(name, policy(), "b2", 5s).granted);  // both places are out
  CHECK(a->probe(name, policy(), "a1", 5s).granted);  // the holder asking again keeps its place
  CHECK(b->probe_end(name, policy(), pa.generation, "b1", kNothing, false).state == CircuitState::half_open);
  CHECK(b->probe(name, policy(), "b2", 5s).granted);  // b1's place came back
  CHECK(a->probe_end(name, policy(), pa.generation, "a1", kSucceeded, false).state == CircuitState::half_open);
  const SharedCircuitView closed = b->probe_end(name, policy(), pa.generation, "b2", kSucceeded, false);
  CHECK(closed.state == CircuitState::closed);
  CHECK(closed.changed);
  CHECK(closed.generation == pa.generation + 1);
  CHECK(heard.wait_for(name, CircuitState::closed));
}

TEST_CASE("shared circuit store: a failed probe opens it again, and a dead holder's place comes back at its lease's end") {
  const weave::ResilienceOptions o = options();
  auto a = weave::detail::open_circuit_store(o);
  const std::string name = opened_breaker(*a, "dead");
  std::this_thread::sleep_for(350ms);
  const SharedCircuitView p1 = a->probe(name, policy(), "dies", 100ms);
  REQUIRE(p1.granted);
  REQUIRE(a->probe(name, policy(), "lives", 5s).granted);
  CHECK_FALSE(a->probe(name, policy(), "third", 5s).granted);
  std::this_thread::sleep_for(150ms);  // "dies" never ends its probe
  CHECK(a->probe(name, policy(), "third", 5s).granted);
  const SharedCircuitView reopened = a->probe_end(name, policy(), p1.generation, "lives", kFailed, false);
  CHECK(reopened.state == CircuitState::open);  // one of two probes failed: 50 %
  CHECK(reopened.changed);
  CHECK(reopened.retry_after_ms > 200);
  // The late end of a probe of the half-open phase changes nothing.
  const SharedCircuitView late = a->probe_end(name, policy(), p1.generation, "third", kSucceeded, false);
  CHECK(late.state == CircuitState::open);
  CHECK_FALSE(late.changed);
}

TEST_CASE("shared circuit store: probes all out for open_for open it again") {
  const weave::ResilienceOptions o = options();
  auto a = weave::detail::open_circuit_store(o);
  const std::string name = opened_breaker(*a, "stuck");
  std::this_thread::sleep_for(350ms);
  REQUIRE(a->probe(name, policy(), "x", 10s).granted);
  REQUIRE(a->probe(name, policy(), "y", 10s).granted);
  std::this_thread::sleep_for(350ms);  // neither ended within open_for
  const SharedCircuitView v = a->probe(name, policy(), "z", 10s);
  CHECK(v.state == CircuitState::open);
  CHECK(v.changed);
  CHECK_FALSE(v.granted);
}
