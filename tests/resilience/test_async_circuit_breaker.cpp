// [[circuit_breaker]] on asynchronous methods (src/resilience/asio/): failed
// calls open it, refused calls never start the body, and a cancelled call
// counts for nothing.
#include <catch2/catch.hpp>

#include <chrono>

#include "async_circuit_breaker_api.weave.h"
#include "async_test_support.h"
#include "eventually.h"
#include "weave/asio.h"
#include "weave/circuit_breaker.h"
#include "weave/error.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;

TEST_CASE("async circuit breaker: failures open it, a cancelled call is not one, refusals skip the body", "[async]") {
  weave::Woven<asyncresilient::Dependency> dep;
  CHECK_THROWS_AS(async_test::run(1, dep.call(true, 0)), weave::IoError);
  {  // cancelled while it waits: not a failure
    net::io_context io;
    async_test::Outcome out;
    async_test::CancelAfter cancel(io, 10ms);
    net::co_spawn(io, dep.call(true, 10'000), net::bind_cancellation_slot(cancel.slot(), async_test::record(out)));
    io.run();
    REQUIRE(out.done);
    CHECK(out.aborted());
  }
  const weave::CircuitBreaker b =
      weave::circuit_breaker("async:dep", {.failure_rate = 100, .window_calls = 2, .min_calls = 2, .open_for = 10s});
  CHECK(b.state() == weave::CircuitState::closed);  // one failure and a cancellation: one call in the window
  CHECK_THROWS_AS(async_test::run(1, dep.call(true, 0)), weave::IoError);
  CHECK(b.state() == weave::CircuitState::open);
  const int runs = dep.runs;
  CHECK_THROWS_AS(async_test::run(1, dep.call(false, 0)), weave::CircuitOpen);
  CHECK(dep.runs == runs);
}

TEST_CASE("async circuit breaker: a shared one opens once its failures are reported, then refuses without running the body", "[async]") {
  weave::Woven<asyncresilient::Dependency> dep;
  CHECK_THROWS_AS(async_test::run(1, dep.shared(true)), weave::IoError);
  CHECK_THROWS_AS(async_test::run(1, dep.shared(true)), weave::IoError);
  const weave::CircuitBreaker b = weave::circuit_breaker(
      "async:shared", {.failure_rate = 100, .window = 10s, .min_calls = 2, .open_for = 10s, .shared = true});
  // (the flusher reports within flush_interval)
  REQUIRE(test_support::eventually([&] { return b.state() == weave::CircuitState::open; }, 5s));
  const int runs = dep.runs;
  CHECK_THROWS_AS(async_test::run(1, dep.shared(false)), weave::CircuitOpen);
  CHECK(dep.runs == runs);
}
