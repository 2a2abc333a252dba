// weave::CircuitBreaker and [[circuit_breaker]] on synchronous methods: the
// state machine's table on a fake clock (src/resilience/circuit_state.h),
// then passes, names, events and woven methods on real time.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "circuit_breaker_api.weave.h"
#include "event_recorder.h"
#include "eventually.h"
#include "resilience/circuit_state.h"
#include "weave/circuit_breaker.h"
#include "weave/error.h"
#include "weave/event.h"
#include "weave/metrics.h"
#include "weave/resilience.h"
#include "weave/woven.h"

using namespace std::chrono_literals;
using weave::CircuitState;
using State = weave::detail::CircuitBreakerState;

namespace {
std::int64_t fake_ns = 0;
std::int64_t fake_now() noexcept { return fake_ns; }
constexpr std::int64_t kMs = 1'000'000;

// One call let through and ended: true when it was let through.
bool call(State& s, int outcome, bool slow = false) {
  const auto admitted = s.admit();
  if (!admitted) return false;
  s.record(admitted, outcome, slow);
  return true;
}
constexpr int kSucceeded = 1, kFailed = 2, kCancelled = 0;
}  // namespace

TEST_CASE("circuit breaker: a count window opens on the failure that reaches the rate over min_calls") {
  fake_ns = 0;
  State s("t:count", {.failure_rate = 50, .window_calls = 10, .min_calls = 5, .open_for = 1000ms}, &fake_now);
  for (int i = 0; i < 4; ++i) REQUIRE(call(s, kFailed));
  CHECK(s.state() == CircuitState::closed);  // 4 calls: under min_calls
  REQUIRE(call(s, kSucceeded));
  CHECK(s.state() == CircuitState::closed);  // a success never opens it
  REQUIRE(call(s, kFailed));                 // 6 calls, 5 failed
  CHECK(s.state() == CircuitState::open);
  CHECK(s.retry_after() == 1000ms);
  CHECK_FALSE(call(s, kSucceeded));  // refused
  fake_ns = 400 * kMs;
  CHECK(s.retry_after() == 600ms);
  CHECK(s.counts().refused == 1);
  CHECK(s.counts().opened == 1);
}

TEST_CASE("circuit breaker: the count window keeps the last calls only") {
  fake_ns = 0;
  State s("t:ring", {.failure_rate = 50, .window_calls = 4, .min_calls = 4}, &fake_now);
  // f s s s s f: the first failure has left the window when the second comes
  for (int o : {kFailed, kSucceeded, kSucceeded, kSucceeded, kSucceeded, kFailed}) REQUIRE(call(s, o));
  CHECK(s.state() == CircuitState::closed);  // 1 of the last 4
  REQUIRE(call(s, kFailed));                 // 2 of the last 4: 50 %
  CHECK(s.state() == CircuitState::open);
}

TEST_CASE("circuit breaker: a time window forgets calls older than the window") {
  fake_ns = 0;
  State s("t:time", {.failure_rate = 100, .window = 1000ms, .min_calls = 3}, &fake_now);
  REQUIRE(call(s, kFailed));
  fake_ns = 500 * kMs;
  REQUIRE(call(s, kFailed));
  fake_ns = 1600 * kMs;  // the first two are out of the window
  REQUIRE(call(s, kFailed));
  CHECK(s.state() == CircuitState::closed);
  fake_ns = 1700 * kMs;
  REQUIRE(call(s, kFailed));
  REQUIRE(call(s, kFailed));
  CHECK(s.state() == CircuitState::open);
}

TEST_CASE("circuit breaker: after open_for, half_open_calls probes pass and their success closes it") {
  fake_ns = 0;
  State s("t:probe", {.failure_rate = 50, .window_calls = 4, .min_calls = 2, .open_for = 100ms, .half_open_calls = 2},
          &fake_now);
  REQUIRE(call(s, kFailed));
  REQUIRE(call(s, kFailed));
  REQUIRE(s.state() == CircuitState::open);
  fake_ns = 99 * kMs;
  CHECK_FALSE(s.admit());
  fake_ns = 100 * kMs;
  const auto a = s.admit(), b = s.admit();
  CHECK(s.state() == CircuitState::half_open);
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(s.admit());  // every probe is out
  CHECK(s.retry_after() == 0ms);
  s.record(a, kCancelled, false);  // a cancelled probe gives its place back
  const auto c = s.admit();
  REQUIRE(c);
  s.record(b, kSucceeded, false);
  CHECK(s.state() == CircuitState::half_open);
  s.record(c, kSucceeded, false);
  CHECK(s.state() == CircuitState::closed);
  // A new window: one failure is under min_calls.
  REQUIRE(call(s, kFailed));
  CHECK(s.state() == CircuitState::closed);
}

TEST_CASE("circuit breaker: probes that fail as often as the rate open it again at once") {
  fake_ns = 0;
  State s("t:reopen", {.failure_rate = 50, .window_calls = 2, .min_calls = 2, .open_for = 100ms, .half_open_calls = 4},
          &fake_now);
  REQUIRE(call(s, kFailed));
  REQUIRE(call(s, kFailed));
  fake_ns = 100 * kMs;
  REQUIRE(call(s, kFailed));  // 1 of 4 probes
  CHECK(s.state() == CircuitState::half_open);
  REQUIRE(call(s, kFailed));  // 2 of 4: 50 % of every probe whatever the others do
  CHECK(s.state() == CircuitState::open);
  CHECK(s.retry_after() == 100ms);
  CHECK(s.counts().opened == 2);
}

TEST_CASE("circuit breaker: probes still out open_for after it became half-open open it again") {
  fake_ns = 0;
  State s("t:overdue", {.failure_rate = 50, .window_calls = 2, .min_calls = 2, .open_for = 100ms, .half_open_calls = 1},
          &fake_now);
  REQUIRE(call(s, kFailed));
  REQUIRE(call(s, kFailed));
  fake_ns = 100 * kMs;
  const auto stuck = s.admit();  // a probe that does not come back
  REQUIRE(stuck);
  fake_ns = 150 * kMs;
  CHECK_FALSE(s.admit());
  CHECK(s.state() == CircuitState::half_open);  // not overdue yet
  fake_ns = 200 * kMs;
  CHECK_FALSE(s.admit());
  CHECK(s.state() == CircuitState::open);  // overdue: open again, for open_for
  CHECK(s.retry_after() == 100ms);
  s.record(stuck, kSucceeded, false);  // its late outcome counts for nothing
  CHECK(s.state() == CircuitState::open);
  fake_ns = 300 * kMs;
  CHECK(call(s, kSucceeded));  // a new probe
  CHECK(s.state() == CircuitState::closed);
}

TEST_CASE("circuit breaker: outcomes of calls let through before a change of state are not counted") {
  fake_ns = 0;
  State s("t:stale", {.failure_rate = 50, .window_calls = 4, .min_calls = 2, .open_for = 100ms, .half_open_calls = 1},
          &fake_now);
  const auto early = s.admit();  // let through while closed, ends later
  REQUIRE(call(s, kFailed));
  REQUIRE(call(s, kFailed));
  REQUIRE(s.state() == CircuitState::open);
  fake_ns = 100 * kMs;
  REQUIRE(call(s, kSucceeded));  // the probe
  REQUIRE(s.state() == CircuitState::closed);
  s.record(early, kFailed, false);  // from the first window: dropped
  REQUIRE(call(s, kFailed));        // one failure in the new window
  CHECK(s.state() == CircuitState::closed);
}

TEST_CASE("circuit breaker: slow calls open it at slow_call_rate") {
  weave::CircuitBreaker b("t:slow", {.slow_call = 20ms, .slow_call_rate = 50, .window_calls = 4, .min_calls = 2});
  b.call([] { std::this_thread::sleep_for(25ms); });  // slow, though it succeeded
  CHECK(b.state() == CircuitState::closed);
  b.call([] {});
  CHECK(b.state() == CircuitState::closed);  // only a failure or a slow call can open it
  b.call([] { std::this_thread::sleep_for(25ms); });
  CHECK(b.state() == CircuitState::open);
  CHECK_THROWS_AS(b.call([] {}), weave::CircuitOpen);
}

TEST_CASE("circuit breaker: call() passes results and errors, and refuses with CircuitOpen") {
  weave::CircuitBreaker b("t:call", {.failure_rate = 100, .window_calls = 2, .min_calls = 2, .open_for = 10s});
  CHECK(b.call([] { return 3; }) == 3);
  CHECK_THROWS_AS(b.call([]() -> int { throw std::runtime_error("down"); }), std::runtime_error);
  CHECK_THROWS_AS(b.call([]() -> int { throw std::runtime_error("down"); }), std::runtime_error);
  REQUIRE(b.state() == CircuitState::open);
  try {
    b.call([] {});
    FAIL("not refused");
  } catch (const weave::CircuitOpen& e) {
    CHECK_FALSE(e.retryable());
    CHECK(e.key() == "t:call");
    CHECK(e.retry_after() > 9s);
  }
  CHECK_FALSE(b.try_pass());
}

TEST_CASE("circuit breaker: breakers are shared by name, with one policy") {
  weave::CircuitBreaker a = weave::circuit_breaker("t:named", {.min_calls = 3});
  weave::CircuitBreaker b = weave::circuit_breaker("t:named", {.min_calls = 3});
  CHECK(a.state_ptr() == b.state_ptr());
  CHECK_THROWS_AS(weave::circuit_breaker("t:named", {.min_calls = 4}), weave::UsageError);
}

TEST_CASE("circuit breaker: a policy out of range is a UsageError") {
  using P = weave::CircuitBreakerPolicy;
  for (const P& p : {P{.failure_rate = 0}, P{.failure_rate = 101}, P{.slow_call_rate = 0}, P{.slow_call = -1ms},
                     P{.window = 99ms}, P{.window_calls = 100'001}, P{.min_calls = 0},
                     P{.window_calls = 5, .min_calls = 6}, P{.open_for = 0ms}, P{.half_open_calls = 0}})
    CHECK_THROWS_AS(weave::check_circuit_breaker_policy(p), weave::UsageError);
  CHECK_NOTHROW(weave::check_circuit_breaker_policy({}));
  CHECK_THROWS_AS(weave::CircuitBreaker("", {}), weave::UsageError);
}

TEST_CASE("circuit breaker: each change of state is an event") {
  std::mutex m;
  std::vector<std::string> seen;
  weave::set_event_handler([&](const weave::Event& e) {
    if (e.key != "t:events") return;
    const std::lock_guard<std::mutex> g(m);
    seen.emplace_back(weave::to_string(e.kind));
  });
  weave::CircuitBreaker b("t:events", {.failure_rate = 100, .window_calls = 1, .min_calls = 1, .open_for = 30ms,
                                       .half_open_calls = 1});
  CHECK_THROWS(b.call([] { throw std::runtime_error("down"); }));
  std::this_thread::sleep_for(40ms);
  b.call([] {});
  weave::set_event_handler(weave::write_event_to_stderr);
  CHECK(seen == std::vector<std::string>{"circuit_opened", "circuit_half_open", "circuit_closed"});
}

TEST_CASE("circuit breaker: on a woven method, refused calls throw or are skipped without running it") {
  weave::Woven<resilient::Dependency> dep;
  CHECK(dep.call(false) == 1);
  CHECK(dep.call(false) == 2);
  CHECK_THROWS_AS(dep.call(true), weave::IoError);
  CHECK_THROWS_AS(dep.call(true), weave::IoError);  // 2 of the last 4 failed: open
  CHECK_THROWS_AS(dep.call(false), weave::CircuitOpen);
  CHECK(dep.maybe(false) == std::nullopt);  // the same breaker, skipping
  CHECK(dep.runs == 4);
  std::this_thread::sleep_for(60ms);
  CHECK(dep.call(false) == 5);  // the probe passes: closed
  CHECK(weave::circuit_breaker("dep:call", {.failure_rate = 50, .window_calls = 4, .min_calls = 4,
                                            .open_for = 50ms, .half_open_calls = 1})
            .state() == CircuitState::closed);
}

TEST_CASE("circuit breaker: a retry outside it does not retry its refusals") {
  weave::Woven<resilient::Dependency> dep;
  // Two runs fail (a retryable IoError) and open it; the third is refused,
  // and that refusal, not retryable, ends the retries.
  CHECK_THROWS_AS(dep.retried(true), weave::CircuitOpen);
  CHECK(dep.runs == 2);
  dep.runs = 0;
  CHECK_THROWS_AS(dep.retried(false), weave::CircuitOpen);
  CHECK(dep.runs == 0);
}

TEST_CASE("circuit breaker: record_on and ignore_on decide which exceptions are failures") {
  weave::Woven<resilient::Dependency> dep;
  const weave::CircuitBreaker b = weave::circuit_breaker(
      "dep:narrow", {.failure_rate = 100, .window_calls = 2, .min_calls = 2, .open_for = 10s});
  CHECK_THROWS_AS(dep.narrow(1), std::system_error);      // a failure
  CHECK_THROWS_AS(dep.narrow(2), std::invalid_argument);  // nothing
  CHECK_THROWS_AS(dep.narrow(2), std::invalid_argument);
  CHECK(b.state() == weave::CircuitState::closed);  // one call in the window
  CHECK_THROWS_AS(dep.narrow(3), std::runtime_error);  // a success: 1 of 2 failed
  CHECK(b.state() == weave::CircuitState::closed);
  CHECK_THROWS_AS(dep.narrow(1), std::system_error);
  CHECK_THROWS_AS(dep.narrow(1), std::system_error);  // the last two failed: 100 %
  CHECK(b.state() == weave::CircuitState::open);
}

TEST_CASE("circuit breaker: threads through one breaker lose no outcome, and it opens and closes under them") {
  weave::CircuitBreaker b("t:threads", {.failure_rate = 50, .window_calls = 50, .min_calls = 20, .open_for = 2ms,
                                        .half_open_calls = 3});
  constexpr int kThreads = 8, kCalls = 4000;
  std::atomic<long> ran{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        weave::CircuitPass p = b.try_pass();
        if (!p) {
          ++refused;
          continue;
        }
        ++ran;
        // Bursts of failures, then of successes: the breaker opens and closes.
        if (((i / 200) + t) % 2 == 0) p.failed();
        else p.succeeded();
      }
    });
  for (auto& th : threads) th.join();
  const auto& c = b.state_ptr()->counts();
  CHECK(ran + refused == kThreads * kCalls);
  CHECK(c.succeeded + c.failed == static_cast<std::uint64_t>(ran.load()));
  CHECK(c.refused == static_cast<std::uint64_t>(refused.load()));
  CHECK(c.opened > 0);
}

TEST_CASE("circuit breaker: a named breaker's outcomes and state are metrics") {
  const weave::CircuitBreaker b =
      weave::circuit_breaker("metrics:cb", {.failure_rate = 100, .window_calls = 1, .min_calls = 1, .open_for = 10s});
  b.call([] {});
  CHECK_THROWS(b.call([] { throw std::runtime_error("down"); }));
  CHECK_THROWS_AS(b.call([] {}), weave::CircuitOpen);
  const std::string text = weave::metrics_text();
  CHECK_THAT(text, Catch::Contains("weave_circuit_calls_total{breaker=\"metrics:cb\",outcome=\"succeeded\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_calls_total{breaker=\"metrics:cb\",outcome=\"failed\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_calls_total{breaker=\"metrics:cb\",outcome=\"refused\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_opened_total{breaker=\"metrics:cb\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_state{breaker=\"metrics:cb\"} 1\n"));
}

TEST_CASE("circuit breaker: a shared one on a woven method opens once the flusher reported its failures, and says so in its metrics") {
  weave::configure_resilience({.flush_interval = 5ms});
  weave::Woven<resilient::Dependency> dep;
  CHECK(dep.shared(false) == 1);
  CHECK(dep.shared(false) == 2);
  CHECK_THROWS_AS(dep.shared(true), weave::IoError);
  CHECK_THROWS_AS(dep.shared(true), weave::IoError);  // 2 of 4 failed: the store opens it at the next report
  const weave::CircuitBreaker breaker = weave::circuit_breaker(
      "dep:shared", {.failure_rate = 50, .window = 10s, .min_calls = 4, .open_for = 10s, .shared = true});
  REQUIRE(test_support::eventually([&] { return breaker.state() == CircuitState::open; }, 5s));
  try {
    dep.shared(false);
    FAIL("an open breaker let the call through");
  } catch (const weave::CircuitOpen& e) {
    CHECK(e.retry_after() > 9s);
  }
  CHECK(dep.runs == 4);
  const std::string text = weave::metrics_text();
  CHECK_THAT(text, Catch::Contains("weave_circuit_opened_total{breaker=\"dep:shared\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_state{breaker=\"dep:shared\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_store_errors_total{breaker=\"dep:shared\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_local_calls_total{breaker=\"dep:shared\"} 0\n"));
}

TEST_CASE("circuit breaker: a shared one whose store cannot be reached decides on its local state, counted and told once") {
  EventRecorder told({weave::EventKind::circuit_store_error});
  weave::configure_resilience({.url = "redis://127.0.0.1:1", .connect_timeout = 50ms, .command_timeout = 50ms,
                               .flush_interval = 5ms});
  const weave::CircuitBreaker b = weave::circuit_breaker(
      "unreachable:cb", {.failure_rate = 50, .window = 10s, .min_calls = 2, .open_for = 10s, .shared = true});
  b.call([] {});
  CHECK_THROWS_AS(b.call([] { throw std::runtime_error("down"); }), std::runtime_error);  // 1 of 2: opens it here
  CHECK_THROWS_AS(b.call([] {}), weave::CircuitOpen);
  std::this_thread::sleep_for(50ms);  // the flusher's turns find the store still gone
  CHECK(told.keys() == std::vector<std::string>{"unreachable:cb"});
  const std::string text = weave::metrics_text();
  CHECK_THAT(text, Catch::Contains("weave_circuit_local_calls_total{breaker=\"unreachable:cb\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("weave_circuit_store_errors_total{breaker=\"unreachable:cb\"} 1\n"));
  weave::configure_resilience({});
}
