// Shared circuit breakers (CircuitBreakerPolicy::shared) as callers see
// them: in this process on every store, and across four circuit_worker
// processes on the Redis stores: one process's failures open it in all of
// them, half_open_calls probes at most across the fleet, a SIGKILLed
// probe's place comes back.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/unique_token.h"
#include "eventually.h"
#include "redis_server.h"
#include "weave/circuit_breaker.h"
#include "weave/resilience.h"

using namespace std::chrono_literals;
using weave::CircuitState;

namespace {

std::string fresh_name(const std::string& what) { return what + "-" + weave::detail::unique_token(); }

std::unique_ptr<redis_test::Child> worker(const std::string& name, int open_for_ms) {
  return std::make_unique<redis_test::Child>(
      std::vector<std::string>{WEAVE_CIRCUIT_WORKER, test_store_url(), name, std::to_string(open_for_ms)});
}

// Sends `command` to each, then reads each one's answer.
std::vector<std::string> ask_all(std::vector<std::unique_ptr<redis_test::Child>>& workers, const std::string& command) {
  for (auto& w : workers) w->send(command);
  std::vector<std::string> answers;
  for (auto& w : workers) answers.push_back(w->line().value_or("(none)"));
  return answers;
}

}  // namespace

TEST_CASE("shared circuit breaker: its own failures, once reported, open it, and its probes close it again") {
  weave::configure_resilience({.url = test_store_url(), .flush_interval = 10ms});
  const weave::CircuitBreaker breaker = weave::circuit_breaker(
      fresh_name("inproc"),
      {.failure_rate = 50, .window = 10s, .min_calls = 4, .open_for = 200ms, .half_open_calls = 1, .shared = true});
  CHECK(breaker.state() == CircuitState::closed);
  for (int i = 0; i < 4; ++i) {
    weave::CircuitPass p = breaker.try_pass();
    REQUIRE(p);
    p.failed();
  }
  REQUIRE(test_support::eventually([&] { return breaker.state() == CircuitState::open; }, 5s));  // (the flusher's report opened it)
  CHECK_FALSE(breaker.try_pass());
  CHECK(breaker.retry_after() > 0ms);
  CHECK_THROWS_AS(breaker.call([] { return 1; }), weave::CircuitOpen);
  std::this_thread::sleep_for(250ms);
  weave::CircuitPass probe = breaker.try_pass();
  REQUIRE(probe);
  CHECK(breaker.state() == CircuitState::half_open);
  CHECK_FALSE(breaker.try_pass());  // the one probe place is taken
  probe.succeeded();
  CHECK(breaker.state() == CircuitState::closed);
  CHECK(breaker.call([] { return 7; }) == 7);
}

TEST_CASE("shared circuit breaker: the time-based window only, and one policy per name") {
  CHECK_THROWS_AS(weave::CircuitBreaker("x", {.window_calls = 10, .min_calls = 5, .shared = true}), weave::UsageError);
  weave::configure_resilience({.url = test_store_url()});
  const std::string name = fresh_name("policy");
  weave::CircuitBreaker a(name, {.min_calls = 5, .shared = true});
  CHECK_THROWS_AS(weave::CircuitBreaker(name, {.min_calls = 6, .shared = true}), weave::UsageError);
}

TEST_CASE("shared circuit processes: one process's failures open it in all four, which then refuse", "[redis]") {
  const std::string name = fresh_name("fleet");
  std::vector<std::unique_ptr<redis_test::Child>> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(worker(name, 10'000));
  for (auto& w : workers) REQUIRE(w->line() == "READY closed");
  for (std::size_t i = 1; i < workers.size(); ++i) workers[i]->send("await open 5000");
  workers[0]->send("fail 20");
  CHECK(workers[0]->line() == "CALLS 20 0");
  for (std::size_t i = 1; i < workers.size(); ++i) {
    const auto seen = workers[i]->line();
    REQUIRE(seen);
    CHECK(seen->rfind("STATE open ", 0) == 0);  // without a call of its own
  }
  for (const std::string& answer : ask_all(workers, "try")) CHECK(answer == "REFUSED");
}

TEST_CASE("shared circuit processes: at most half_open_calls probes across the fleet, and a SIGKILLed probe's place comes back", "[redis]") {
  const std::string name = fresh_name("probes");
  std::vector<std::unique_ptr<redis_test::Child>> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(worker(name, 500));
  for (auto& w : workers) REQUIRE(w->line() == "READY closed");
  workers[0]->send("fail 20");
  REQUIRE(workers[0]->line() == "CALLS 20 0");
  for (const std::string& answer : ask_all(workers, "await open 5000")) REQUIRE(answer.rfind("STATE open ", 0) == 0);
  std::this_thread::sleep_for(600ms);  // open_for
  int holding = 0;
  std::vector<std::size_t> holders;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    workers[i]->send("hold");
    const auto answer = workers[i]->line();
    REQUIRE(answer);
    if (*answer == "HOLDING") {
      ++holding;
      holders.push_back(i);
    }
  }
  CHECK(holding == 2);  // half_open_calls, fleet-wide
  REQUIRE(holders.size() == 2);
  // A probe holder dies: its place comes back once its lease (open_for) ends.
  workers[holders[0]]->signal(SIGKILL);
  std::this_thread::sleep_for(600ms);
  std::size_t other = 0;
  while (other == holders[0] || other == holders[1]) ++other;
  workers[other]->send("hold");
  CHECK(workers[other]->line() == "HOLDING");
  workers[other]->send("end ok");
  CHECK(workers[other]->line() == "ENDED");
}
