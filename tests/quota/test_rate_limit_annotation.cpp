// [[rate_limit]] on woven methods (rate_limited_api.h) on the store under
// test: each on_limit policy, the key a call is counted under, a limit
// stacked with a lock, and a store that fails.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "event_recorder.h"
#include "rate_limited_api.weave.h"
#include "quota_suite.h"
#include "weave/error.h"
#include "weave/quota.h"
#include "weave/woven.h"

using namespace std::chrono_literals;
using quota_test::fresh_key;
using quota_test::use_store;
using Clock = std::chrono::steady_clock;

TEST_CASE("rate_limit annotation: a call over the rate throws RateLimited naming its key, and the method does not run") {
  use_store();
  weave::Woven<quotas::Api> api;
  const std::string user = fresh_key("user");
  CHECK(api.handle(user, 1) == 2);
  CHECK(api.handle(user, 2) == 4);  // burst=2
  try {
    api.handle(user, 3);
    FAIL("a third call within the minute ran");
  } catch (const weave::RateLimited& e) {
    CHECK(e.key() == "api:" + user);
    CHECK(e.retryable());
    CHECK(e.retry_after() > 0us);
    CHECK(e.retry_after() <= 30s);  // one interval of 2/min at most
  }
  CHECK(api.runs == 2);
  CHECK(api.handle(fresh_key("other"), 5) == 10);  // another user's quota is its own
}

TEST_CASE("rate_limit annotation: on_limit=wait runs each call at its turn, one interval apart") {
  use_store();
  weave::Woven<quotas::Api> api;
  const std::string tenant = fresh_key("tenant");
  // Four calls at once at 2/s, burst 1: turns 0, 0.5, 1 and 1.5 s after the
  // first, all within the 2 s wait.
  std::vector<Clock::time_point> ran(4);
  const auto start = Clock::now();
  {
    std::vector<std::jthread> callers;
    for (auto& t : ran) callers.emplace_back([&api, &tenant, &t] {
      api.send(tenant);
      t = Clock::now();
    });
  }
  std::sort(ran.begin(), ran.end());
  CHECK(api.runs == 4);
  // The last ran three intervals after the first at least (the store's clock
  // and this one differ by far less than the 100 ms allowed).
  CHECK(ran.back() - ran.front() >= 1400ms);
  CHECK(ran.back() - start >= 1400ms);
}

TEST_CASE("rate_limit annotation: on_limit=wait throws RateLimited at once when the turn is further off than wait") {
  use_store();
  weave::Woven<quotas::Api> api;
  const std::string tenant = fresh_key("tenant");
  api.report(tenant);
  const auto start = Clock::now();
  CHECK_THROWS_AS(api.report(tenant), weave::RateLimited);  // its turn is an hour away
  CHECK(Clock::now() - start < 1s);                         // refused without waiting
  CHECK(api.runs == 1);
}

TEST_CASE("rate_limit annotation: on_limit=skip skips the method and the caller gets nothing") {
  use_store();
  weave::Woven<quotas::Api> api;
  const std::string source = fresh_key("source");
  CHECK(api.poll(source) == 7);
  CHECK(api.poll(source) == std::nullopt);
  CHECK(api.poll(source) == std::nullopt);
  CHECK(api.runs == 1);
  CHECK(api.poll(fresh_key("source")) == 7);
}

TEST_CASE("rate_limit annotation: without a key the calls of the method share one quota under its qualified name") {
  use_store();
  weave::Woven<quotas::Api> api, another;
  CHECK(api.tick() == 1);
  CHECK(another.tick() == 1);  // another object, the same method: the same quota
  CHECK(api.tick() == 2);
  try {
    another.tick();
    FAIL("a fourth call within 10 s ran");
  } catch (const weave::RateLimited& e) {
    CHECK(e.key() == "quotas::Api::tick");
  }
}

TEST_CASE("rate_limit annotation: stacked inside a lock, a refused call gives the lock back") {
  use_store();
  weave::Woven<quotas::Api> api;
  const std::string tenant = fresh_key("tenant");
  CHECK(api.batch(tenant) == 1);
  CHECK_THROWS_AS(api.batch(tenant), weave::RateLimited);
  CHECK_THROWS_AS(api.batch(tenant), weave::RateLimited);  // not LockBusy: the lock was released
  CHECK(api.runs == 1);
}

TEST_CASE("rate_limit annotation: counted in quota_stats") {
  use_store();
  weave::Woven<quotas::Api> api;
  const weave::QuotaStats before = weave::quota_stats();
  const std::string source = fresh_key("source");
  api.poll(source);
  api.poll(source);
  const weave::QuotaStats after = weave::quota_stats();
  CHECK(after.admitted - before.admitted == 1);
  CHECK(after.limited - before.limited == 1);
}

// (Once, in the mem:// suite: the failing store is a Redis URL of its own.)
// A port nothing listens on: every store call fails to connect.
TEST_CASE("rate_limit annotation: a failing store throws IoError naming the key, or with on_store_error=allow lets the "
          "call run and reports it", "[mem]") {
  int closed_port = 0;
  {
    // Bound and closed again: free now, and nobody else's (the kernel hands
    // out ephemeral ports in turn).
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    closed_port = ntohs(a.sin_port);
    ::close(fd);
  }
  weave::configure_quota({.url = "redis://127.0.0.1:" + std::to_string(closed_port),
                          .connect_timeout = 200ms, .command_timeout = 200ms});
  weave::Woven<quotas::Api> api;
  const std::string user = fresh_key("user");
  try {
    api.handle(user, 1);
    FAIL("ran without its store");
  } catch (const weave::IoError& e) {
    CHECK(e.key() == "api:" + user);
  }
  CHECK(api.runs == 0);

  EventRecorder events({weave::EventKind::quota_error});
  const weave::QuotaStats before = weave::quota_stats();
  CHECK(api.feed(41) == 41);
  CHECK(api.feed(41) == 41);  // unlimited while the store fails
  CHECK(api.runs == 2);
  CHECK(weave::quota_stats().errors - before.errors == 2);
  REQUIRE(events.count(weave::EventKind::quota_error, "quota") == 2);
  CHECK(events.keys().front() == "feed:41");
  use_store();
}
