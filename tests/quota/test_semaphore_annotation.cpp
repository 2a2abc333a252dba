// [[semaphore]] on woven methods (semaphore_api.h) on the store under test:
// the bound across concurrent calls, a refusal or a skip when no permit
// comes, the permit in the call's context, the default key.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "semaphore_api.weave.h"
#include "quota_suite.h"
#include "weave/error.h"
#include "weave/quota.h"
#include "weave/semaphore.h"
#include "weave/woven.h"

using namespace std::chrono_literals;
using quota_test::fresh_key;
using quota_test::use_store;

TEST_CASE("semaphore annotation: concurrent calls of one key run at most `permits` at once, the others wait their turn") {
  use_store();
  weave::Woven<quotas::Exports> exports;
  const std::string tenant = fresh_key("tenant");
  {
    std::vector<std::jthread> callers;
    for (int i = 0; i < 6; ++i) callers.emplace_back([&] { exports.run(tenant, 100); });
  }
  CHECK(exports.runs == 6);
  CHECK(exports.most == 2);
  CHECK(weave::Semaphore().list("export:" + tenant).empty());  // every permit given back
}

TEST_CASE("semaphore annotation: with every permit held a call throws SemaphoreBusy naming its key, or is skipped") {
  use_store();
  weave::Woven<quotas::Exports> exports;
  const std::string tenant = fresh_key("tenant");
  std::atomic<bool> started{false}, finish{false};
  std::jthread holder([&] { exports.single(tenant, started, finish); });
  while (!started) std::this_thread::sleep_for(5ms);
  try {
    exports.single(tenant, started, finish);
    FAIL("a second call ran beside the first");
  } catch (const weave::SemaphoreBusy& e) {
    CHECK(e.key() == "single:" + tenant);
    CHECK(e.retryable());
  }
  CHECK(exports.maybe(tenant) == std::nullopt);  // the same key, on_busy=skip
  CHECK(exports.runs == 1);
  finish = true;
  holder.join();
  CHECK(exports.maybe(tenant) == 7);
}

TEST_CASE("semaphore annotation: the body finds its permit with current_permit(), outside it there is none") {
  use_store();
  weave::Woven<quotas::Exports> exports;
  const std::string tenant = fresh_key("tenant");
  const std::uint64_t first = exports.token(tenant);
  CHECK(first > 0);
  CHECK(exports.token(tenant) > first);  // each call's permit has a higher fencing token
  CHECK(weave::current_permit() == nullptr);
}

TEST_CASE("semaphore annotation: without a key the calls of the method share its qualified name's permits") {
  use_store();
  weave::Woven<quotas::Exports> exports;
  CHECK(exports.plain() == 1);
  weave::Semaphore sem;
  weave::Permit held = sem.acquire("quotas::Exports::plain", {.permits = 1});
  CHECK_THROWS_AS(exports.plain(), weave::SemaphoreBusy);
  held.release();
  CHECK(exports.plain() == 2);
}
