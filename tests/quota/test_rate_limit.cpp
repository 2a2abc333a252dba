// weave::RateLimiter on the store under test: GCRA's admissions, turns for
// callers that wait, refusals that take nothing, the bound in any window,
// and the one number a key keeps.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "faketime.h"
#include "quota_suite.h"
#include "weave/error.h"
#include "weave/quota.h"
#include "weave/rate_limit.h"

using namespace std::chrono_literals;
using quota_test::fresh_key;
using Clock = std::chrono::steady_clock;

namespace {

weave::RateLimiter limiter() {
  weave::configure_quota({.url = test_store_url()});
  return weave::RateLimiter();
}

}  // namespace

// Limits here are slow (seconds between permits): the store's clock moves
// on between a test's requests, and a loaded machine must not make a
// request late enough to find its quota refilled.
TEST_CASE("rate limit: an idle key admits its burst at once, then refuses, saying when the next permit comes") {
  auto limits = limiter();
  const std::string key = fresh_key("burst");
  const weave::RateLimit limit{.permits = 10, .per = 1min, .burst = 5};
  for (std::uint64_t i = 0; i < 5; ++i) {
    const weave::RateDecision d = limits.try_acquire(key, limit);
    REQUIRE(d.admitted);
    CHECK(d.wait == 0us);
    CHECK(d.remaining == 4 - i);
  }
  const weave::RateDecision refused = limits.try_acquire(key, limit);
  REQUIRE_FALSE(refused.admitted);
  CHECK(refused.wait > 0us);
  CHECK(refused.wait <= 6s);  // one interval (1 min / 10) at most
  CHECK(refused.remaining == 0);
}

TEST_CASE("rate limit: burst defaults to one period's permits") {
  auto limits = limiter();
  const std::string key = fresh_key("default-burst");
  int admitted = 0;
  for (int i = 0; i < 20; ++i) admitted += limits.try_acquire(key, {.permits = 7, .per = 1h}).admitted;
  CHECK(admitted == 7);
}

TEST_CASE("rate limit: a refused request takes nothing from the key") {
  auto limits = limiter();
  const std::string key = fresh_key("refused");
  const weave::RateLimit limit{.permits = 1, .per = 1h, .burst = 3};
  REQUIRE(limits.try_acquire(key, limit, 2).admitted);
  for (int i = 0; i < 5; ++i) {
    const weave::RateDecision d = limits.try_acquire(key, limit, 2);
    REQUIRE_FALSE(d.admitted);
    CHECK(d.remaining == 1);
  }
  CHECK(limits.try_acquire(key, limit, 1).admitted);  // the one permit left is still there
  CHECK_FALSE(limits.try_acquire(key, limit, 1).admitted);
}

TEST_CASE("rate limit: callers that may wait get turns one interval apart, in the order they reached the store") {
  auto limits = limiter();
  const std::string key = fresh_key("turns");
  const weave::RateLimit limit{.permits = 6, .per = 1min, .burst = 1};  // a turn every 10 s
  const weave::RateDecision first = limits.reserve(key, limit, 1min);
  const weave::RateDecision second = limits.reserve(key, limit, 1min);
  const weave::RateDecision third = limits.reserve(key, limit, 1min);
  REQUIRE((first.admitted && second.admitted && third.admitted));
  CHECK(first.wait == 0us);
  // Each turn one interval after the one before; the store's clock moved on
  // between the requests, so the waits are a little shorter.
  CHECK(second.wait > 5s);
  CHECK(second.wait <= 10s);
  CHECK(third.wait > second.wait + 5s);
  CHECK(third.wait <= 20s);
  // A turn beyond the wait is refused and taken by nobody.
  const weave::RateDecision late = limits.reserve(key, limit, 10s);
  REQUIRE_FALSE(late.admitted);
  CHECK(late.wait > 20s);
  CHECK(limits.reserve(key, limit, 1min).wait > third.wait);  // the next turn after the third
}

TEST_CASE("rate limit: acquire sleeps until its turn, and throws RateLimited naming the key when it is too far") {
  auto limits = limiter();
  const std::string key = fresh_key("acquire");
  const weave::RateLimit limit{.permits = 2, .per = 1s, .burst = 1};  // a turn every 500 ms
  limits.acquire(key, limit, 0ms);
  const auto start = Clock::now();
  limits.acquire(key, limit, 10s);  // its turn: one interval after the first's
  CHECK(Clock::now() - start >= 250ms);
  try {
    limits.acquire(key, limit, 0ms);
    FAIL("admitted past the rate");
  } catch (const weave::RateLimited& e) {
    CHECK(e.key() == key);
    CHECK(e.retryable());
    CHECK(e.retry_after() > 0us);
    CHECK(e.retry_after() <= 500ms);
    CHECK_THAT(e.what(), Catch::Contains(key));
  }
}

// Whatever the store's clock said for each admission, every one of them
// happened between the first request's send and the last reply: a bound
// the client can check without reading the store's clock.
TEST_CASE("rate limit: 8 threads hammering one key never get more than rate x elapsed + burst") {
  auto limits = limiter();
  const std::string key = fresh_key("hammer");
  const weave::RateLimit limit{.permits = 200, .per = 1s, .burst = 20};
  std::atomic<long> admitted{0}, refused{0};
  std::atomic<bool> stop{false};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      while (!stop.load()) (limits.try_acquire(key, limit).admitted ? admitted : refused).fetch_add(1);
    });
  std::this_thread::sleep_for(700ms);
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  INFO("admitted " << admitted << " refused " << refused << " in " << elapsed_s << " s");
  CHECK(admitted.load() <= static_cast<long>(200 * elapsed_s) + 20);
  CHECK(admitted.load() >= 20);  // the burst at least
  CHECK(refused.load() > 0);
}

TEST_CASE("rate limit: a changed limit applies to the quota the key has spent") {
  auto limits = limiter();
  const std::string key = fresh_key("change");
  for (int i = 0; i < 5; ++i) REQUIRE(limits.try_acquire(key, {.permits = 10, .per = 1min, .burst = 5}).admitted);
  // Spent up to 30 s from now; at 20/min with a burst of 5 (15 s) the next turn is ~18 s away.
  const weave::RateDecision d = limits.try_acquire(key, {.permits = 20, .per = 1min, .burst = 5});
  REQUIRE_FALSE(d.admitted);
  CHECK(d.wait > 12s);
  CHECK(d.wait <= 18s);
}

TEST_CASE("rate limit: limits out of range and bad keys are usage errors naming the key") {
  auto limits = limiter();
  CHECK_THROWS_WITH(limits.try_acquire("k", {.permits = 0}), Catch::Contains("'k'") && Catch::Contains("permits"));
  CHECK_THROWS_WITH(limits.try_acquire("k", {.permits = 5, .per = 0ms}), Catch::Contains("per"));
  CHECK_THROWS_WITH(limits.try_acquire("k", {.permits = 5, .burst = 2}, 3), Catch::Contains("burst (2)"));
  CHECK_THROWS_WITH(limits.try_acquire("k", {.permits = 5}, 0), Catch::Contains("not 0"));
  CHECK_THROWS_WITH(limits.try_acquire("k", {.permits = 1, .per = std::chrono::hours(24 * 365 * 40)}),
                    Catch::Contains("2^50"));
  CHECK_THROWS_WITH(limits.try_acquire("k", {.permits = 1, .per = std::chrono::milliseconds::max()}),
                    Catch::Contains("per spans"));
  CHECK_THROWS_AS(limits.try_acquire("", {.permits = 5}), weave::UsageError);
  CHECK_THROWS_AS(limits.try_acquire(std::string(5000, 'x'), {.permits = 5}), weave::UsageError);
}

// Extreme values are decided, not wrapped around: more permits than
// microseconds in `per` is one permit a microsecond, and any wait is capped.
TEST_CASE("rate limit: permits and waits at the ends of their types are decided without overflow") {
  auto limits = limiter();
  const std::string key = fresh_key("extremes");
  const weave::RateLimit every_us{.permits = UINT64_MAX, .per = 1s, .burst = 3};
  for (int i = 0; i < 3; ++i) REQUIRE(limits.try_acquire(key, every_us).admitted);
  const weave::RateDecision d = limits.reserve(key, every_us, std::chrono::milliseconds::max());
  REQUIRE(d.admitted);
  CHECK(d.wait <= 1ms);
  const std::string slow = fresh_key("extremes-slow");
  const weave::RateLimit hourly{.permits = 1, .per = 1h, .burst = 1};
  REQUIRE(limits.try_acquire(slow, hourly).admitted);
  const weave::RateDecision later = limits.reserve(slow, hourly, std::chrono::milliseconds::max());
  REQUIRE(later.admitted);  // a turn within the (capped) wait
  CHECK(later.wait > 59min);
  CHECK(later.wait <= 1h);
}

TEST_CASE("rate limit: quota_stats counts admitted, waited and limited decisions") {
  auto limits = limiter();
  const std::string key = fresh_key("stats");
  const weave::QuotaStats before = weave::quota_stats();
  const weave::RateLimit limit{.permits = 1, .per = 1h, .burst = 1};
  REQUIRE(limits.try_acquire(key, limit).admitted);
  REQUIRE_FALSE(limits.try_acquire(key, limit).admitted);
  REQUIRE(limits.reserve(fresh_key("stats-wait"), {.permits = 10, .per = 1s, .burst = 1}, 0ms).admitted);
  const weave::QuotaStats after = weave::quota_stats();
  CHECK(after.admitted - before.admitted == 2);
  CHECK(after.limited - before.limited == 1);
}

TEST_CASE("rate limit: list names the keys whose quota is spent ahead, sorted, with how far ahead") {
  auto limits = limiter();
  const std::string stem = fresh_key("list");
  const weave::RateLimit hourly{.permits = 60, .per = 1h};  // a permit a minute
  REQUIRE(limits.try_acquire(stem + ":b", hourly, 2).admitted);
  REQUIRE(limits.try_acquire(stem + ":a", hourly, 5).admitted);
  REQUIRE(limits.try_acquire(stem + "-other", hourly).admitted);
  const std::vector<weave::RateLimitState> listed = limits.list(stem + ":*");
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].key == stem + ":a");
  CHECK(listed[0].spent_ahead > 4min);
  CHECK(listed[0].spent_ahead <= 5min);
  CHECK(listed[1].key == stem + ":b");
  CHECK(listed[1].spent_ahead <= 2min);
  CHECK(limits.list(stem + ":[x-z]").empty());
}

TEST_CASE("rate limit: a limiter with options of its own uses its own store") {
  weave::configure_quota({.url = test_store_url()});
  // Another table of mem://, another key prefix on Redis.
  const std::string url = test_store_is_mem() ? std::string("mem://own-limits") : test_store_url();
  weave::RateLimiter own({.url = url, .key_prefix = "weave:quota-own:"});
  weave::RateLimiter shared;
  const std::string key = fresh_key("own");
  const weave::RateLimit limit{.permits = 1, .per = 1h, .burst = 1};
  REQUIRE(own.try_acquire(key, limit).admitted);
  CHECK(shared.try_acquire(key, limit).admitted);
  CHECK_FALSE(own.try_acquire(key, limit).admitted);
}

// Four processes on one key, two with their clocks 5 minutes ahead and two
// 5 minutes behind, two taking permits as fast as they can and two waiting
// for their turns: together never more than rate x elapsed + burst, as if
// they were one (the decisions use the server's clock only).
TEST_CASE("rate limit: processes with clocks 5 minutes apart share one exact limit on the server's clock", "[redis]") {
  weave::configure_quota({.url = test_store_url()});
  const std::string key = fresh_key("skewed");
  const std::string worker = std::string(WEAVE_RATE_WORKER) + " " + test_store_url() + " " + key + " 100 1000 10 1500 ";
  const auto start = Clock::now();
  SkewedRun workers[] = {{"+5m", worker + "try"}, {"-5m", worker + "try"}, {"+5m", worker + "wait"}, {"-5m", worker + "wait"}};
  long admitted = 0, refused = 0;
  for (std::size_t i = 0; i < std::size(workers); ++i) {
    const std::string got = workers[i].answer();
    INFO(got);
    INFO(workers[i].errors());
    long a = -1, r = -1;
    REQUIRE(std::sscanf(got.c_str(), "admitted %ld refused %ld", &a, &r) == 2);
    if (i >= 2) CHECK(a > 0);  // a waiting process gets turns (the others may find every permit taken ahead)
    admitted += a;
    refused += r;
  }
  const double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  INFO("admitted " << admitted << " refused " << refused << " in " << elapsed_s << " s");
  CHECK(admitted <= static_cast<long>(100 * elapsed_s) + 10);
  CHECK(admitted >= 10);
  CHECK(refused > 0);
}

TEST_CASE("rate limit: a key keeps one integer in the store, gone once its quota has refilled", "[redis]") {
  auto limits = limiter();
  const std::string hourly = fresh_key("stored");
  REQUIRE(limits.try_acquire(hourly, {.permits = 1, .per = 1h, .burst = 1}).admitted);
  const std::optional<std::string> stored = read_raw("{weave:quota:rate:" + hourly + "}");
  REQUIRE(stored);
  CHECK(stored->find_first_not_of("0123456789") == std::string::npos);
  const std::string fast = fresh_key("refilled");
  REQUIRE(limits.try_acquire(fast, {.permits = 100, .per = 1s, .burst = 1}).admitted);
  std::this_thread::sleep_for(200ms);  // its tat (10 ms ahead) has long passed
  CHECK_FALSE(read_raw("{weave:quota:rate:" + fast + "}"));
}
