// [[semaphore]] on asynchronous methods (src/quota/asio/), woven by weavegen
// (async_semaphore_api.h), on the store under test: waiters suspended on one
// thread, and calls cancelled while they wait or while they hold a permit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "async_semaphore_api.weave.h"
#include "async_test_support.h"
#include "weave/asio.h"
#include "weave/error.h"
#include "weave/quota.h"
#include "weave/semaphore.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;

namespace {

struct ExportsCase {
  ExportsCase() { weave::configure_quota({.url = test_store_url()}); }
  weave::Woven<asyncquotas::Exports> exports;
  net::io_context io;
};

}  // namespace

TEST_CASE_METHOD(ExportsCase, "async semaphore: six calls on one thread, at most two at once, the others suspended",
                 "[async]") {
  const std::string tenant = async_test::unique_name("export");
  std::vector<async_test::Outcome> outcomes(6);
  for (auto& o : outcomes) net::co_spawn(io, exports.run(tenant, 200), async_test::record(o));
  async_test::run_threads(io, 1);  // a waiter holding the thread would stop every holder's timer
  for (const auto& o : outcomes) {
    REQUIRE(o.done);
    CHECK_FALSE(o.error);
  }
  CHECK(exports.runs == 6);
  CHECK(exports.most == 2);
  CHECK(weave::Semaphore().list("export:" + tenant).empty());
}

TEST_CASE_METHOD(ExportsCase, "async semaphore: calls cancelled while waiting or while running leave no permit and no place",
                 "[async]") {
  const std::string tenant = async_test::unique_name("cancel");
  weave::Semaphore sem;
  weave::Permit held = sem.acquire("export:" + tenant, {.permits = 2});
  // One call runs (the second permit) and one waits; both are cancelled.
  async_test::Outcome running, waiting;
  net::cancellation_signal cancel_running, cancel_waiting;
  net::co_spawn(io, exports.run(tenant, 5000),
                net::bind_cancellation_slot(cancel_running.slot(), async_test::record(running)));
  net::co_spawn(io, exports.run(tenant, 5000),
                net::bind_cancellation_slot(cancel_waiting.slot(), async_test::record(waiting)));
  net::steady_timer soon(io, 300ms);
  soon.async_wait([&](auto) {
    cancel_waiting.emit(net::cancellation_type::terminal);
    cancel_running.emit(net::cancellation_type::terminal);
  });
  async_test::run_threads(io, 1);
  REQUIRE(running.done);
  REQUIRE(waiting.done);
  CHECK(running.aborted());
  CHECK(waiting.aborted());
  CHECK(exports.runs == 0);
  // Only `held` is left: one permit free at once, nobody in line ahead.
  const std::vector<weave::SemaphoreState> left = sem.list("export:" + tenant);
  REQUIRE(left.size() == 1);
  CHECK(left[0].holders.size() == 1);
  CHECK(left[0].waiting == 0);
  CHECK(sem.try_acquire("export:" + tenant, {.permits = 2}));
}
