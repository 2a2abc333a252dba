// weave::retry() and [[retry]] on synchronous methods: a retryable
// weave::Error runs the call again up to `attempts` in all, anything else
// passes at once, the last error passes on, and the waits stay under the
// backoff's caps.
#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>

#include "retry_api.weave.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/retry.h"
#include "weave/woven.h"

using namespace std::chrono_literals;

TEST_CASE("retry delay: uniformly random under a cap that doubles from backoff to max_backoff") {
  const weave::RetryPolicy p{.attempts = 10, .backoff = 10ms, .max_backoff = 35ms};
  const std::chrono::nanoseconds caps[] = {10ms, 20ms, 35ms, 35ms, 35ms};
  for (int done = 1; done <= 5; ++done) {
    std::chrono::nanoseconds lowest = caps[done - 1], highest{0};
    for (int i = 0; i < 2000; ++i) {
      const auto d = weave::retry_delay(p, done);
      REQUIRE(d >= 0ns);
      REQUIRE(d <= caps[done - 1]);
      lowest = std::min(lowest, d);
      highest = std::max(highest, d);
    }
    // Spread over the range (2,000 draws: each end's last 10 % is missed with
    // probability 0.9^2000).
    CHECK(lowest < caps[done - 1] / 10);
    CHECK(highest > caps[done - 1] * 9 / 10);
  }
  CHECK(weave::retry_delay({.attempts = 3, .backoff = 0ms, .max_backoff = 0ms}, 2) == 0ns);
  CHECK(weave::retry_delay({.attempts = 100, .backoff = 1ms, .max_backoff = 1h}, 99) <= 1h);  // no overflow
  using ms = std::chrono::milliseconds;
  CHECK(weave::retry_delay({.attempts = 100, .backoff = ms::max(), .max_backoff = ms::max()}, 99) <= weave::max_duration);
}

TEST_CASE("retry: a retryable error runs the call again, up to attempts in all, the last error passing on") {
  int runs = 0;
  CHECK(weave::retry({.attempts = 3, .backoff = 1ms, .max_backoff = 2ms}, [&] {
          if (++runs < 3) throw weave::TimeoutError("slow");
          return runs;
        }) == 3);
  runs = 0;
  CHECK_THROWS_WITH(weave::retry({.attempts = 2, .backoff = 1ms, .max_backoff = 1ms},
                                 [&]() -> int { throw weave::IoError("down " + std::to_string(++runs)); }),
                    "down 2");
  CHECK(runs == 2);
}

TEST_CASE("retry: an error that is not a retryable weave::Error passes on at once") {
  int runs = 0;
  CHECK_THROWS_AS(weave::retry({}, [&]() -> int {
                    ++runs;
                    throw weave::UsageError("wrong");
                  }),
                  weave::UsageError);
  CHECK_THROWS_AS(weave::retry({}, [&]() -> int {
                    ++runs;
                    throw std::runtime_error("not ours");
                  }),
                  std::runtime_error);
  CHECK(runs == 2);
}

TEST_CASE("retry: a policy out of range is a UsageError") {
  auto nothing = [] { return 0; };
  CHECK_THROWS_AS(weave::retry({.attempts = 0}, nothing), weave::UsageError);
  CHECK_THROWS_AS(weave::retry({.attempts = 101}, nothing), weave::UsageError);
  CHECK_THROWS_AS(weave::retry({.attempts = 2, .backoff = 2s, .max_backoff = 1s}, nothing), weave::UsageError);
  CHECK_THROWS_AS(weave::retry({.attempts = 2, .max_backoff = std::chrono::milliseconds::max()}, nothing),
                  weave::UsageError);
}

TEST_CASE("retry annotation: the method runs again after a retryable error, up to attempts") {
  weave::Woven<resilient::Flaky> flaky;
  flaky.failures = 3;
  CHECK(flaky.call() == 4);  // runs 1-3 failed, run 4 returned
  flaky.runs = 0;
  flaky.failures = 10;
  CHECK_THROWS_WITH(flaky.call(), "run 4 failed");  // the last error
  CHECK(flaky.runs == 4);
  flaky.runs = 0;
  flaky.retryable = false;
  CHECK_THROWS_AS(flaky.call(), std::runtime_error);
  CHECK(flaky.runs == 1);
}

TEST_CASE("retry annotation: by default it runs outside a lock, which each run takes again") {
  weave::Woven<resilient::Flaky> flaky;
  flaky.failures = 2;
  CHECK(flaky.locked() == 3);
  // Each run held the lock and gave it back: free now.
  CHECK(flaky.locked() == 4);
}

TEST_CASE("retry annotation: each run gets the caller's arguments, even after a run moved from its own") {
  weave::Woven<resilient::Flaky> flaky;
  flaky.failures = 2;
  CHECK(flaky.echo(std::string(64, 'x')) == std::string(64, 'x'));
  CHECK(flaky.runs == 3);
}

TEST_CASE("retry: retry_on names the types retried, and spent runs go to the fallback") {
  weave::Woven<resilient::Flaky> flaky;
  flaky.failures = 2;
  CHECK(flaky.picky(0) == 3);  // Transient: retried
  flaky.runs = 0;
  CHECK(flaky.picky(1) == 3);  // std::system_error: retried
  flaky.runs = 0;
  CHECK_THROWS_AS(flaky.picky(2), weave::IoError);  // retryable by default, but not named: passes on at once
  CHECK(flaky.runs == 1);
  flaky.runs = 0;
  flaky.failures = 100;
  CHECK(flaky.picky(0) == -1);  // three runs spent: the fallback answers
  CHECK(flaky.runs == 3);
}

TEST_CASE("retry: a policy's retry_on from code") {
  int runs = 0;
  const weave::RetryPolicy p{.attempts = 3, .backoff = 1ms, .max_backoff = 1ms,
                             .retry_on = &weave::error_is<std::out_of_range>};
  CHECK(weave::retry(p, [&] {
          if (++runs < 3) throw std::out_of_range("not yet");
          return runs;
        }) == 3);
  runs = 0;
  CHECK_THROWS_AS(weave::retry(p, [&]() -> int { ++runs; throw weave::IoError("not named"); }), weave::IoError);
  CHECK(runs == 1);
  CHECK(weave::error_is<std::logic_error>(std::make_exception_ptr(std::out_of_range("derived"))));
  CHECK_FALSE(weave::error_is<std::out_of_range>(std::make_exception_ptr(std::logic_error("base"))));
  CHECK_FALSE(weave::error_is<std::exception>(std::exception_ptr{}));
}
