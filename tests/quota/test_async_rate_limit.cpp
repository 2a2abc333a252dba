// [[rate_limit]] on asynchronous methods (src/quota/asio/), woven by weavegen
// (async_rate_limited.h), on the store under test: calls waiting for their
// turns suspended on one thread, a refusal, a skip, and a call cancelled
// while it waits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "async_rate_limited.weave.h"
#include "async_test_support.h"
#include "weave/asio.h"
#include "weave/error.h"
#include "weave/quota.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct ApiCase {
  ApiCase() { weave::configure_quota({.url = test_store_url()}); }
  weave::Woven<asyncquotas::Api> api;
  net::io_context io;
};

}  // namespace

TEST_CASE_METHOD(ApiCase, "async rate limit: calls waiting for their turns are suspended, one thread serves them all",
                 "[async]") {
  const std::string tenant = async_test::unique_name("mail");
  // 4 calls at 2/s, burst 1, on the io_context's one thread: turns 0, 0.5,
  // 1 and 1.5 s. Meanwhile a timer on the same thread ticks every 50 ms: a
  // wait that held the thread would leave it no time to tick.
  std::vector<async_test::Outcome> outcomes(4);
  const auto start = Clock::now();
  for (std::size_t i = 0; i < 4; ++i)
    net::co_spawn(io, api.send(tenant, static_cast<long>(i)), async_test::record(outcomes[i]));
  int ticks = 0;
  async_test::tick_until(
      io, 50ms, [&] { return std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.done.load(); }); },
      ticks);
  async_test::run_threads(io, 1);
  for (const auto& o : outcomes) {
    REQUIRE(o.done);
    CHECK_FALSE(o.error);
  }
  CHECK(api.runs == 4);
  CHECK(Clock::now() - start >= 1400ms);  // the last turn, 3 intervals after the first
  // ~30 ticks while suspended; a thread asleep in each wait would allow a few.
  CHECK(ticks >= 10);
}

TEST_CASE_METHOD(ApiCase, "async rate limit: a call over the rate throws RateLimited and a skipped one gets nothing",
                 "[async]") {
  const std::string user = async_test::unique_name("user");
  CHECK(async_test::run(1, api.handle(user)) == 1);
  try {
    async_test::run(1, api.handle(user));
    FAIL("a second call within the hour ran");
  } catch (const weave::RateLimited& e) {
    CHECK(e.key() == "api:" + user);
    CHECK(e.retry_after() > 59min);
  }
  const std::string source = async_test::unique_name("poll");
  CHECK(async_test::run(1, api.poll(source)) == std::optional<long>(2));
  CHECK(async_test::run(1, api.poll(source)) == std::nullopt);
  CHECK(api.runs == 2);
}

TEST_CASE_METHOD(ApiCase, "async rate limit: a call cancelled while it waits for its turn ends at once and never runs",
                 "[async]") {
  const std::string tenant = async_test::unique_name("cancel");
  async_test::run(1, api.send(tenant, 1));  // the key's burst is spent: the next turn is 500 ms away
  async_test::Outcome waiting;
  net::cancellation_signal cancel;
  net::co_spawn(io, api.send(tenant, 2), net::bind_cancellation_slot(cancel.slot(), async_test::record(waiting)));
  net::steady_timer soon(io, 100ms);
  soon.async_wait([&](auto) { cancel.emit(net::cancellation_type::terminal); });
  const auto start = Clock::now();
  async_test::run_threads(io, 1);
  REQUIRE(waiting.done);
  CHECK(waiting.aborted());
  CHECK(Clock::now() - start < 450ms);  // ended at the cancellation, not at its turn
  CHECK(api.runs == 1);
}
