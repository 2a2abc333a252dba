// [[timeout]] on asynchronous methods (src/resilience/asio/): at the deadline
// the body's pending co_await ends with operation_aborted, the caller gets
// weave::TimeoutExceeded, and nothing is left on the io_context.
#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "async_test_support.h"
#include "async_timeout_api.weave.h"
#include "weave/asio.h"
#include "weave/error.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("async timeout: a body waiting on a 10 s timer is cancelled at the deadline", "[async]") {
  weave::Woven<asyncresilient::Sleepy> sleepy;
  net::io_context io;
  async_test::Outcome out;
  const auto t0 = Clock::now();
  net::co_spawn(io, sleepy.sleep(10'000), async_test::record(out));
  io.run();  // returns once nothing is left on it: the body's timer was cancelled
  const auto took = Clock::now() - t0;
  REQUIRE(out.done);
  CHECK(sleepy.aborted);
  REQUIRE(out.error);
  try {
    std::rethrow_exception(out.error);
  } catch (const weave::TimeoutExceeded& e) {
    CHECK(e.after() == 100ms);
    CHECK(e.key() == "asyncresilient::Sleepy::sleep");
  }
  CHECK(took >= 100ms);
  CHECK(took < 5s);  // (bench_resilience measures how soon after the deadline)
}

TEST_CASE("async timeout: a body that ends in time keeps its result or its error, its deadline timer gone", "[async]") {
  weave::Woven<asyncresilient::Sleepy> sleepy;
  CHECK(async_test::run(1, sleepy.sleep(1)) == 1);
  CHECK_FALSE(sleepy.aborted);
  const auto t0 = Clock::now();
  CHECK(async_test::run(1, sleepy.quick(5)) == 5);
  CHECK(Clock::now() - t0 < 5s);  // the io_context ran dry long before the 10 s deadline: its timer was cancelled
  CHECK_THROWS_WITH(async_test::run(1, sleepy.fail()), "failed in time");
}

TEST_CASE("async timeout: a caller's cancellation passes on as the body's, not as a timeout", "[async]") {
  weave::Woven<asyncresilient::Sleepy> sleepy;
  net::io_context io;
  async_test::Outcome out;
  async_test::CancelAfter cancel(io, 10ms);
  net::co_spawn(io, sleepy.sleep(10'000), net::bind_cancellation_slot(cancel.slot(), async_test::record(out)));
  io.run();
  REQUIRE(out.done);
  CHECK(out.aborted());
  CHECK(sleepy.aborted);
}

TEST_CASE("async timeout: on an io_context run by four threads, every call times out cleanly", "[async]") {
  weave::Woven<asyncresilient::Sleepy> sleepy;
  net::io_context io;
  constexpr int kCalls = 40;
  std::vector<async_test::Outcome> outs(kCalls);
  for (int i = 0; i < kCalls; ++i) net::co_spawn(io, sleepy.nap(10'000), async_test::record(outs[i]));
  async_test::run_threads(io, 4);
  for (auto& out : outs) {
    REQUIRE(out.done);
    CHECK_THROWS_AS(std::rethrow_exception(out.error), weave::TimeoutExceeded);
  }
}

TEST_CASE("async timeout: a nested woven call's nearer deadline ends it, the outer call passing that on", "[async]") {
  weave::Woven<asyncresilient::Sleepy> sleepy;
  CHECK(async_test::run(2, sleepy.outer(1)) == 1);  // in time for both, its lock taken and given back
  try {
    async_test::run(2, sleepy.outer(10'000));
    FAIL("no TimeoutExceeded");
  } catch (const weave::TimeoutExceeded& e) {
    CHECK(e.key() == "asyncresilient::Sleepy::inner");
    CHECK(e.after() == 20ms);
  }
  CHECK(async_test::run(2, sleepy.outer(1)) == 1);  // the lock was given back
}
