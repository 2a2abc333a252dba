// weave::timeout() and [[timeout]] on synchronous methods: a call that ends
// in time keeps its result or its error; past the deadline the call's stop
// token fires (weave::current_stop_token()) and the caller gets
// TimeoutExceeded once the body returns, with a late error nested in it.
#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <stdexcept>
#include <thread>

#include "core/cycle_clock.h"
#include "timeout_api.weave.h"
#include "weave/call_context.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/timeout.h"
#include "weave/woven.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
// Sleeps in 1 ms steps until the call's stop token fires or `most` passed;
// true when it fired.
bool wait_for_stop(std::chrono::milliseconds most) {
  const auto end = Clock::now() + most;
  while (Clock::now() < end) {
    if (weave::current_stop_token().stop_requested()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}
}  // namespace

TEST_CASE("timeout: a call that ends in time keeps its result or its own error") {
  CHECK(weave::timeout(1s, [] { return 7; }) == 7);
  int n = 0;
  weave::timeout(1s, [&] { ++n; });
  CHECK(n == 1);
  int& ref = weave::timeout(1s, [&]() -> int& { return n; });
  CHECK(&ref == &n);
  CHECK_THROWS_AS(weave::timeout(1s, []() -> int { throw std::logic_error("own"); }), std::logic_error);

  weave::Woven<resilient::Slow> slow;
  CHECK(slow.work(3) == 3);
  CHECK_FALSE(slow.saw_stop);
  CHECK_THROWS_WITH(slow.work_then_throw(2), "failed after 2 steps");
}

TEST_CASE("timeout: past the deadline the stop token fires and the caller gets TimeoutExceeded") {
  weave::Woven<resilient::Slow> slow;
  const auto t0 = Clock::now();
  try {
    slow.work(5000);
    FAIL("no TimeoutExceeded");
  } catch (const weave::TimeoutExceeded& e) {
    CHECK(e.retryable());
    CHECK(e.after() == 40ms);
    CHECK(e.key() == "resilient::Slow::work");
    CHECK_THAT(e.what(), Catch::Contains("did not finish within 40 ms"));
  }
  CHECK(slow.saw_stop);
  CHECK(Clock::now() - t0 >= 40ms);
  CHECK(Clock::now() - t0 < 4s);  // it stopped at the token, long before its 5 s of work

  CHECK_THROWS_AS(weave::timeout(20ms, [] { return wait_for_stop(5s); }), weave::TimeoutExceeded);
}

TEST_CASE("timeout: a body that ignores its stop token runs to its end, then the caller gets TimeoutExceeded") {
  weave::Woven<resilient::Slow> slow;
  slow.cooperative = false;
  const auto t0 = Clock::now();
  CHECK_THROWS_AS(slow.work(80), weave::TimeoutExceeded);
  CHECK(Clock::now() - t0 >= 80ms);  // not cut short: C++ cannot stop a thread
  CHECK(slow.saw_stop);
}

TEST_CASE("timeout: an error thrown past the deadline is nested in the TimeoutExceeded") {
  weave::Woven<resilient::Slow> slow;
  slow.cooperative = false;
  try {
    slow.work_then_throw(60);
    FAIL("no TimeoutExceeded");
  } catch (const weave::TimeoutExceeded& e) {
    CHECK_THROWS_WITH(std::rethrow_if_nested(e), "failed after 60 steps");
  }
}

TEST_CASE("timeout: the stop token never fires outside a call, nor in one without a deadline or a lease") {
  CHECK_FALSE(weave::current_stop_token().stop_possible());
  weave::timeout(1s, [] { CHECK(weave::current_stop_token().stop_possible()); });
  CHECK_FALSE(weave::current_stop_token().stop_possible());
}

TEST_CASE("timeout: nested deadlines: the inner scope's token fires at whichever deadline comes first") {
  // The inner deadline is the nearer one.
  weave::timeout(5s, [] {
    CHECK_THROWS_AS(weave::timeout(20ms, [] { CHECK(wait_for_stop(5s)); }), weave::TimeoutExceeded);
    CHECK_FALSE(weave::current_stop_token().stop_requested());  // the outer one has not come
  });
  // The outer deadline is the nearer one: the inner scope hears of it too.
  CHECK_THROWS_AS(weave::timeout(20ms,
                                 [] {
                                   weave::timeout(5s, [] { CHECK(wait_for_stop(5s)); });  // in time for its own
                                 }),
                  weave::TimeoutExceeded);
}

TEST_CASE("timeout: a lease and a deadline share the call's one stop token") {
  // Deadline outside the lock's lease ([[timeout]] before [[lock]]).
  weave::Woven<resilient::Slow> slow;
  CHECK_THROWS_AS(slow.locked(5000), weave::TimeoutExceeded);
  CHECK(slow.saw_stop);

  // A lease outside the deadline: the lease's loss (its fixed ttl running out
  // while held) fires the token inside a far deadline.
  weave::LockClient locks(weave::LockOptions{.url = "mem://"});
  weave::LeaseHandle held = locks.acquire("slow:ttl", {.ttl = 60ms});
  const weave::LeaseScope in_lease(held);
  const auto t0 = Clock::now();
  weave::timeout(5s, [] { CHECK(wait_for_stop(4s)); });
  CHECK(Clock::now() - t0 < 4s);
}

TEST_CASE("timeout: under [[retry]] each run has its own deadline, and a run that threw past it is retried") {
  weave::Woven<resilient::Slow> slow;
  slow.slow_runs = 1;
  CHECK(slow.retried() == 2);
  slow.runs = 0;
  slow.slow_runs = 3;
  CHECK_THROWS_AS(slow.retried(), weave::TimeoutExceeded);
  CHECK(slow.runs == 3);
}

TEST_CASE("timeout: a run that returned past its deadline is not run again: its work is done") {
  weave::Woven<resilient::Slow> slow;
  slow.slow_runs = 1;
  CHECK_THROWS_AS(slow.returns_late(), weave::TimeoutExceeded);
  CHECK(slow.runs == 1);
}

TEST_CASE("timeout: after must be 1 ms to weave::max_duration") {
  CHECK_THROWS_AS(weave::timeout(0ms, [] {}), weave::UsageError);
  CHECK_THROWS_AS(weave::timeout(-1ms, [] {}), weave::UsageError);
  CHECK_THROWS_AS(weave::check_timeout(weave::max_duration + 1ms), weave::UsageError);
  CHECK_NOTHROW(weave::check_timeout(weave::max_duration));
}

TEST_CASE("timeout: timed by the cycle clock once it is ready, a body is late exactly when it took after or more") {
  namespace cycle_clock = weave::detail::cycle_clock;
  cycle_clock::calibrate(Clock::now());
  std::this_thread::sleep_for(25ms);
  cycle_clock::calibrate(Clock::now());
  REQUIRE((cycle_clock::ready_ticks() != 0) == cycle_clock::usable());
  // Bodies around a 20 ms deadline that never ask for their token: the far
  // ones answered by the coarse clock, the near ones by the counter.
  for (const auto sleep : {5ms, 12ms, 16ms, 18ms, 19ms, 21ms, 23ms, 28ms, 40ms}) {
    Clock::time_point start, end;
    bool late = false;
    try {
      weave::timeout(20ms, [&] {
        start = Clock::now();
        std::this_thread::sleep_for(sleep);
        end = Clock::now();
      });
    } catch (const weave::TimeoutExceeded&) {
      late = true;
    }
    const auto took = end - start;
    const double took_ms = std::chrono::duration<double, std::milli>(took).count();
    INFO("slept " << sleep.count() << " ms, took " << took_ms << " ms");
    if (took < 19ms) CHECK_FALSE(late);
    if (took > 21ms) CHECK(late);
  }
  // One that asks: its token fires at the same deadline.
  const auto t0 = Clock::now();
  CHECK_THROWS_AS(weave::timeout(20ms, [] { return wait_for_stop(5s); }), weave::TimeoutExceeded);
  CHECK(Clock::now() - t0 >= 20ms);
  CHECK(Clock::now() - t0 < 4s);
}
