// [[delay]] on every store (docs/queue.md): a call through the proxy is
// stored and returns at once; a DelayWorker runs it later with the
// interceptors below [[delay]]; a call that throws is retried, then dead; a
// stored call of another signature is dead-lettered, never run.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "delay_service.weave.h"
#include "weave/delay_worker.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/queue.h"
#include "weave_vocabulary.h"
#include "eventually.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

void use_store() {
  weave::QueueOptions q;
  q.url = test_store_url();
  weave::configure_queues(q);
  weave::LockOptions l;
  l.url = test_store_url();
  weave::configure_locks(l);
}

// A worker serving `orders` on its own thread until the scope ends.
struct Running {
  explicit Running(weave::Woven<delaytest::Orders>& orders, weave::DelayWorkerOptions options = {.concurrency = 2})
      : worker(options) {
    worker.serve(orders);
    thread = std::jthread([this](std::stop_token stop) { worker.run(stop); });
  }
  weave::DelayWorker worker;
  std::jthread thread;
};

using test_support::eventually;

}  // namespace

TEST_CASE("delay: a call is stored and returns at once, then a worker runs it with its arguments under the lock below", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  static_cast<delaytest::Orders&>(orders).cancel_if_unpaid("o-1", {{"apple", 2}, {"pear", 1}});
  CHECK(orders.lines().empty());  // stored, not run
  CHECK(weave::Queue("delay-orders").stats().ready == 1);
  Running worker(orders);
  REQUIRE(eventually([&] { return orders.lines().size() == 1; }));
  CHECK(orders.lines().front() == "o-1 applex2 pearx1 locked");
  REQUIRE(eventually([&] { return worker.worker.stats().ran == 1; }));
  // (acknowledged with the worker's next take, just after `ran` counts it)
  CHECK(eventually([] { return weave::Queue("delay-orders").stats().in_flight == 0; }));
}

TEST_CASE("delay: after= holds the call back until it is due", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  Running worker(orders);
  const auto called = Clock::now();
  static_cast<delaytest::Orders&>(orders).later(7);
  REQUIRE(eventually([&] { return orders.lines().size() == 1; }));
  CHECK(Clock::now() - called >= 399ms);  // due by the store's clock, in whole ms
  CHECK(orders.lines().front() == "later 7");
}

TEST_CASE("delay: a call that throws is retried after its backoff, then dead with its error", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  static_cast<delaytest::Orders&>(orders).flaky("card declined");
  Running worker(orders);
  REQUIRE(eventually([&] { return weave::Queue("delay-flaky").stats().dead == 1; }));
  CHECK(orders.flaky_calls == 3);  // the first run and retries=2
  CHECK(worker.worker.stats().failed == 3);
  weave::Queue q("delay-flaky");
  CHECK(q.purge_dead() == 1);
}

TEST_CASE("delay: a worker taking batches runs each stored call once and settles a failing one alone", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  constexpr int kCalls = 20;
  auto& calls = static_cast<delaytest::Orders&>(orders);
  for (int i = 0; i < kCalls; ++i) {
    calls.cancel_if_unpaid("b-" + std::to_string(i), {});
    if (i == 3) calls.cancel_if_unpaid("fail-1", {});  // taken in the first batch of 8, with seven that succeed
  }
  Running worker(orders, {.concurrency = 1, .batch = 8});
  weave::Queue q("delay-orders");
  REQUIRE(eventually([&] { return q.stats().dead == 1 && worker.worker.stats().ran == kCalls; }));
  CHECK(orders.lines().size() == kCalls);  // each once: acknowledged with the next take, never run again
  CHECK(worker.worker.stats().failed == 3);  // the first run and retries=2, each settled alone
  const weave::QueueStats left = q.stats();
  CHECK(left.ready + left.in_flight + left.delayed == 0);
  CHECK_THAT(q.dead_letters().at(0).info.last_error, Catch::Contains("declined fail-1"));
  CHECK(q.purge_dead() == 1);
  CHECK_THROWS_AS(weave::DelayWorker({.batch = 0}), weave::ConfigError);
  CHECK_THROWS_AS(weave::DelayWorker({.batch = 1001}), weave::ConfigError);
  try {
    weave::DelayWorker({.concurrency = 0});
    FAIL("concurrency 0 accepted");
  } catch (const weave::ConfigError& e) {  // the field named, as every options struct's check does
    CHECK(e.key() == "concurrency");
    CHECK_THAT(e.what(), Catch::Contains("DelayWorkerOptions::concurrency must be 1..1024, got 0"));
  }
}

TEST_CASE("delay: a stored call of another signature, or of no method served, is dead-lettered and never run", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  weave::Queue q("delay-orders");
  // Written by a build whose method had other parameters (its hash differs).
  const std::string old_build = q.offer_json(
      R"({"m":"delaytest::Orders::cancel_if_unpaid","s":"12345","a":["o-9",[{"sku":"x","qty":1}]]})", 0ms);
  const std::string unknown = q.offer_json(R"({"m":"delaytest::Orders::gone","s":"1","a":[]})", 0ms);
  const std::string garbage = q.offer_json(R"({"hello":"world"})", 0ms);
  Running worker(orders);
  REQUIRE(eventually([&] { return q.stats().dead == 3; }));
  CHECK(orders.lines().empty());
  CHECK_THAT(q.inspect(old_build).last_error, Catch::Contains("signature"));
  CHECK_THAT(q.inspect(unknown).last_error, Catch::Contains("delaytest::Orders::gone"));
  CHECK_THAT(q.inspect(garbage).last_error, Catch::Contains("not a stored"));
  CHECK(worker.worker.stats().rejected == 3);
  q.purge_dead();
}

// nlohmann's reader ends a text at a NUL: a call with more after one would
// otherwise run as if the rest were not there.
TEST_CASE("delay: a stored call followed by a NUL byte and more is dead-lettered, never run", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  weave::Queue q("delay-orders");
  static_cast<delaytest::Orders&>(orders).cancel_if_unpaid("o-7", {{"fig", 1}});
  const std::vector<weave::ListedMessage> stored = q.peek();
  REQUIRE(stored.size() == 1);
  const std::string call = stored.front().payload;
  REQUIRE(q.cancel(stored.front().id));
  const std::string id = q.offer_json(call + std::string(1, '\0') + "garbage", 0ms);
  Running worker(orders);
  REQUIRE(eventually([&] { return q.stats().dead == 1; }));
  CHECK(orders.lines().empty());
  CHECK_THAT(q.inspect(id).last_error, Catch::Contains("not a stored"));
  q.purge_dead();
}

// 200,000 levels: nlohmann/json's dump() would need far more stack than a
// thread has; the worker refuses it unread, with a reason.
TEST_CASE("delay: a stored call nested deeper than JSON's bound is dead-lettered with the reason, the worker unharmed", "[delay]") {
  use_store();
  weave::Woven<delaytest::Orders> orders;
  weave::Queue q("delay-orders");
  const std::string deep = std::string(R"({"m":"delaytest::Orders::cancel_if_unpaid","s":"1","a":[)") +
                           std::string(200000, '[') + std::string(200000, ']') + "]}";
  const std::string id = q.offer_json(deep, 0ms);
  Running worker(orders);
  REQUIRE(eventually([&] { return q.stats().dead == 1; }));
  CHECK(orders.lines().empty());
  CHECK_THAT(q.inspect(id).last_error, Catch::Contains("nests more than 128 levels deep"));
  q.purge_dead();
}

TEST_CASE("delay: a worker stops when asked, and run() without anything served is a usage error", "[delay]") {
  use_store();
  weave::DelayWorker idle;
  CHECK_THROWS_AS(idle.run({}), weave::UsageError);
  weave::Woven<delaytest::Orders> orders;
  weave::DelayWorker worker;
  worker.serve(orders);
  std::atomic<bool> returned{false};
  std::jthread thread([&](std::stop_token stop) {
    worker.run(stop);
    returned = true;
  });
  std::this_thread::sleep_for(200ms);  // its takes wait (30 s each) on an empty queue
  CHECK_FALSE(returned);
  thread.request_stop();
  thread.join();  // (a worker deaf to the stop would hang here until its takes time out)
  CHECK(returned);
}

// annotations/delay.json is the one source of these defaults; QueueOptions
// (a public header, which cannot include the generated vocabulary) restates
// them, and this keeps the two equal.
TEST_CASE("delay: QueueOptions' retries and backoffs are [[delay]]'s defaults from annotations/delay.json", "[delay][mem]") {
  const weave::QueueOptions o;
  CHECK(o.retries == weave::vocabulary::delay::retries);
  CHECK(o.backoff == weave::vocabulary::delay::backoff);
  CHECK(o.backoff_cap == weave::vocabulary::delay::backoff_cap);
}
