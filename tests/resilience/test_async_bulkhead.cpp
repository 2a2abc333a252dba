// [[bulkhead]] on asynchronous methods (src/resilience/asio/): waiters
// suspended on one thread (a timer there keeps ticking), served one at a
// time; a call cancelled while it waits leaves the line and never runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

#include "async_bulkhead_api.weave.h"
#include "async_test_support.h"
#include "weave/asio.h"
#include "weave/bulkhead.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("async bulkhead: waiting calls are suspended, one thread serves them all, one at a time", "[async]") {
  weave::Woven<asyncresilient::Api> api;
  net::io_context io;
  std::vector<async_test::Outcome> outcomes(4);
  for (auto& o : outcomes) net::co_spawn(io, api.work(100ms), async_test::record(o));
  int ticks = 0;
  async_test::tick_until(
      io, 20ms, [&] { return std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.done.load(); }); },
      ticks);
  const auto start = Clock::now();
  async_test::run_threads(io, 1);
  for (const auto& o : outcomes) {
    REQUIRE(o.done);
    CHECK_FALSE(o.error);
  }
  CHECK(api.runs == 4);
  CHECK(api.most == 1);
  CHECK(Clock::now() - start >= 400ms);  // one after the other
  CHECK(ticks >= 10);                    // the thread was free while they waited
}

TEST_CASE("async bulkhead: a call cancelled while it waits ends at once, never runs, and leaves the line", "[async]") {
  weave::Woven<asyncresilient::Api> api;
  net::io_context io;
  async_test::Outcome first, waiting;
  net::co_spawn(io, api.work(300ms), async_test::record(first));
  async_test::CancelAfter cancel(io, 100ms);
  net::co_spawn(io, api.work(0ms), net::bind_cancellation_slot(cancel.slot(), async_test::record(waiting)));
  const auto start = Clock::now();
  async_test::run_threads(io, 1);
  REQUIRE(waiting.done);
  CHECK(waiting.aborted());
  REQUIRE(first.done);
  CHECK_FALSE(first.error);
  CHECK(api.runs == 1);
  CHECK(Clock::now() - start < 1s);
  CHECK(weave::bulkhead("asyncresilient::Api::work", 1).waiting() == 0);
  CHECK(weave::bulkhead("asyncresilient::Api::work", 1).running() == 0);
}
