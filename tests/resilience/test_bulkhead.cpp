// weave::Bulkhead and [[bulkhead]] on synchronous methods: at most `max`
// at once, waiters served in arrival order and handed the slot a finishing
// call gives back, BulkheadFull naming the bulkhead, skip, a slot given back
// when the method throws, bulkheads shared by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead_api.weave.h"
#include "eventually.h"
#include "weave/metrics.h"
#include "weave/bulkhead.h"
#include "weave/error.h"
#include "weave/woven.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test_support::eventually;

TEST_CASE("bulkhead: at most max slots at once, a freed one goes to the first waiter in line") {
  weave::Bulkhead b("test-fifo", 2);
  weave::BulkheadSlot s1 = b.enter(), s2 = b.enter();
  CHECK(b.running() == 2);
  CHECK_FALSE(b.try_enter());  // full, and no wait
  std::mutex m;
  std::vector<int> order;
  std::vector<std::jthread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      weave::BulkheadSlot s = b.enter(10s);
      const std::lock_guard<std::mutex> lock(m);
      order.push_back(i);
    });
    REQUIRE(eventually([&] { return b.waiting() == static_cast<std::uint32_t>(i + 1); }));
  }
  // One slot goes round (s2 stays held): the waiters take it one after the
  // other, in arrival order, and a caller that does not wait never takes it
  // ahead of the line.
  s1.release();
  CHECK_FALSE(b.try_enter());
  for (auto& t : waiters) t.join();
  s2.release();
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK(b.running() == 0);
  CHECK(b.waiting() == 0);
}

TEST_CASE("bulkhead: a wait that runs out throws BulkheadFull naming the bulkhead, and leaves the line") {
  weave::Bulkhead b("test-full", 1);
  weave::BulkheadSlot held = b.enter();
  const auto asked = Clock::now();
  try {
    (void)b.enter(100ms);
    FAIL("entered a full bulkhead");
  } catch (const weave::BulkheadFull& e) {
    CHECK(e.key() == "test-full");
    CHECK(e.retryable());
    CHECK(e.waited() == 100ms);
    CHECK(std::string(e.what()).find("'test-full' has all 1 slots taken") != std::string::npos);
  }
  CHECK(Clock::now() - asked >= 100ms);
  CHECK(b.waiting() == 0);
  held.release();
  CHECK(b.try_enter());  // nobody left in line holds it up
}

TEST_CASE("bulkhead: bad names and sizes are UsageErrors, and a name is one bulkhead with one max") {
  CHECK_THROWS_AS(weave::Bulkhead("", 1), weave::UsageError);
  CHECK_THROWS_AS(weave::Bulkhead("zero", 0), weave::UsageError);
  CHECK_THROWS_AS(weave::Bulkhead("huge", 1'000'001), weave::UsageError);
  weave::Bulkhead a = weave::bulkhead("test-named", 1);
  weave::Bulkhead b = weave::bulkhead("test-named", 1);
  weave::BulkheadSlot s = a.enter();
  CHECK_FALSE(b.try_enter());  // the same slots
  CHECK_THROWS_AS(weave::bulkhead("test-named", 2), weave::UsageError);
}

TEST_CASE("bulkhead: a slot moves with its BulkheadSlot and is given back once") {
  weave::Bulkhead b("test-move", 1);
  weave::BulkheadSlot s = b.enter();
  weave::BulkheadSlot moved = std::move(s);
  CHECK_FALSE(s);  // NOLINT(bugprone-use-after-move): moved-from is empty
  CHECK(moved);
  s.release();  // empty: nothing given back
  CHECK(b.running() == 1);
  moved = weave::BulkheadSlot();  // gives it back
  CHECK(b.running() == 0);
}

TEST_CASE("bulkhead annotation: at most max calls run at once, the others wait their turn") {
  weave::Woven<resilient::Api> api;
  std::atomic<int> inside{0}, most{0};
  std::latch go(1);
  std::vector<std::jthread> callers;
  for (int i = 0; i < 6; ++i)
    callers.emplace_back([&] {
      go.wait();
      api.work([&] {
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(50ms);
        --inside;
      });
    });
  go.count_down();
  for (auto& t : callers) t.join();
  CHECK(api.runs == 6);  // each waited (up to 2 s) and ran
  CHECK(most.load() == 2);
}

TEST_CASE("bulkhead annotation: a full bulkhead throws BulkheadFull, or skips, and the method does not run") {
  weave::Woven<resilient::Api> api;
  std::latch inside(1), leave(1);
  std::jthread holder([&] { api.exclusive([&] { inside.count_down(); leave.wait(); }); });
  inside.wait();
  try {
    api.exclusive({});
    FAIL("a second call ran");
  } catch (const weave::BulkheadFull& e) {
    CHECK(e.key() == "resilient::Api::exclusive");  // the default name: the qualified method name
  }
  leave.count_down();
  holder.join();
  std::latch in2(1), out2(1);
  std::jthread other([&] { api.optional([&] { in2.count_down(); out2.wait(); }); });
  in2.wait();
  CHECK(api.optional({}) == std::nullopt);
  out2.count_down();
  other.join();
  CHECK(api.runs == 2);
}

TEST_CASE("bulkhead annotation: a method that throws gives its slot back") {
  weave::Woven<resilient::Api> api;
  CHECK_THROWS_AS(api.exclusive([] { throw std::runtime_error("boom"); }), std::runtime_error);
  CHECK(api.exclusive({}) == 1);  // the slot is free
}

TEST_CASE("bulkhead annotation: methods naming one bulkhead share its slots") {
  weave::Woven<resilient::Api> api;
  std::latch inside(1), leave(1);
  std::jthread holder([&] { api.right([&] { inside.count_down(); leave.wait(); }); });
  inside.wait();
  CHECK(weave::bulkhead("shared", 1).running() == 1);
  CHECK_THROWS_AS(api.left({}), weave::BulkheadFull);  // waited 50 ms for the one slot right holds
  leave.count_down();
  holder.join();
  CHECK(api.left({}) == 2);
}

TEST_CASE("bulkhead annotation: by default it runs outside a lock written before it") {
  weave::Woven<resilient::Api> api;
  std::latch inside(1), leave(1);
  std::jthread holder([&] { api.stacked([&] { inside.count_down(); leave.wait(); }); });
  inside.wait();
  // With the lock outside, this call would meet the held lock (LockBusy)
  // before the bulkhead; the bulkhead is met first.
  CHECK_THROWS_AS(api.stacked({}), weave::BulkheadFull);
  leave.count_down();
  holder.join();
}

TEST_CASE("bulkhead: a named bulkhead's calls, waits and refusals are metrics") {
  weave::Bulkhead b = weave::bulkhead("metrics:bh", 1);
  weave::BulkheadSlot first = b.enter();
  CHECK_FALSE(b.try_enter());  // full at once
  std::thread waiter([&] {
    const weave::BulkheadSlot second = b.enter(std::chrono::seconds(5));  // handed the slot on release
  });
  while (b.waiting() == 0) std::this_thread::yield();
  first.release();
  waiter.join();
  const std::string text = weave::metrics_text();
  CHECK_THAT(text, Catch::Contains("weave_bulkhead_calls_total{bulkhead=\"metrics:bh\",outcome=\"entered\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("weave_bulkhead_calls_total{bulkhead=\"metrics:bh\",outcome=\"full\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_bulkhead_waited_total{bulkhead=\"metrics:bh\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("weave_bulkhead_running{bulkhead=\"metrics:bh\"} 0\n"));
}
