// [[retry]] on asynchronous methods (src/resilience/asio/): the backoff's
// waits are timers (one thread serves the retrying calls and a ticking
// timer), and a call cancelled while it waits ends at once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

#include "async_retry_api.weave.h"
#include "async_test_support.h"
#include "weave/asio.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("async retry: the method runs again after a retryable error, its waits holding no thread", "[async]") {
  weave::Woven<asyncresilient::Flaky> flaky;
  flaky.failures = 3;
  CHECK(async_test::run(1, flaky.call()) == 4);
  flaky.runs = 0;
  flaky.failures = 100;
  CHECK_THROWS_WITH(async_test::run(1, flaky.call()), "run 5 failed");
  CHECK(flaky.runs == 5);
}

TEST_CASE("async retry: a call cancelled in its backoff ends at once", "[async]") {
  weave::Woven<asyncresilient::Flaky> flaky;
  flaky.failures = 100;
  net::io_context io;
  async_test::Outcome out;
  // Cancelled once the first run failed, while it waits (the first wait is
  // under 50 ms, every later one under 100 ms).
  async_test::CancelAfter cancel(io, 20ms);
  net::co_spawn(io, flaky.call(), net::bind_cancellation_slot(cancel.slot(), async_test::record(out)));
  async_test::run_threads(io, 1);
  REQUIRE(out.done);
  CHECK(out.aborted());
  CHECK(flaky.runs < 5);
}

TEST_CASE("async retry: a cancelled call is never run again, even when retry_on names its error's type", "[async]") {
  weave::Woven<asyncresilient::Flaky> flaky;
  net::io_context io;
  async_test::Outcome out;
  async_test::CancelAfter cancel(io, 20ms);
  net::co_spawn(io, flaky.locked_wait(10'000), net::bind_cancellation_slot(cancel.slot(), async_test::record(out)));
  io.run();
  REQUIRE(out.done);
  CHECK(out.aborted());
  CHECK(flaky.runs == 1);
}
