// [[dedupe]] on asynchronous methods (src/dedupe/asio/), woven by weavegen
// (async_payments.h), on every store of the suite: one run per key with the
// duplicates suspended until its result is replayed, the claim in the
// call's context across co_await, cancellation of a waiting duplicate, and a
// failed first call forgotten.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "async/blocking_pool.h"
#include "async_payments.weave.h"
#include "async_test_support.h"
#include "weave/asio.h"
#include "weave/dedupe.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using asyncdedupe::Payments;

namespace {

using async_test::Outcome;
using async_test::record;
using async_test::run_threads;

struct Configured {
  Configured() { weave::configure_dedupe({.url = test_store_url()}); }
  ~Configured() { weave::configure_dedupe({}); }
};

// Most cases: dedupe on the suite's store, a Payments to call, and an
// io_context the case runs.
struct PaymentsCase {
  Configured configured;
  weave::Woven<Payments> payments;
  net::io_context io;
};

}  // namespace

TEST_CASE_METHOD(PaymentsCase,
                 "async dedupe: concurrent duplicates wait suspended for the one run and get its result",
                 "[async]") {
  const std::string key = async_test::unique_name("single");
  constexpr int kCalls = 200;
  std::vector<Outcome> outcomes(kCalls);
  for (auto& o : outcomes) net::co_spawn(io, payments.pay(key, 21, 200), record(o));
  run_threads(io, 4);
  int ok = 0;
  for (const auto& o : outcomes) ok += o.done && !o.error && o.value == 42;
  CHECK(ok == kCalls);
  CHECK(payments.runs() == 1);
  CHECK(payments.claim_missing() == 0);
  const weave::DedupeStats s = weave::dedupe_stats();
  CHECK(s.replays >= kCalls - 1);
}

TEST_CASE_METHOD(PaymentsCase,
                 "async dedupe: a first call and a replayed duplicate send their round trips "
                 "from the caller's own thread",
                 "[async]") {
  // Redis: the claim and the finish go from the io_context's thread
  // (store/asio/async_run.h), mem:// runs them inline: no job for the store pool.
  // (One hash tag: on a cluster, the warm-up reaches the master the calls go to.)
  const std::string tag = "{" + async_test::unique_name("own-thread") + "}";
  Outcome warm;
  net::co_spawn(io, payments.pay(tag + "warm", 1, 0), record(warm));  // connects, loads scripts
  io.run();
  REQUIRE(warm.done);
  REQUIRE_FALSE(warm.error);
  // The pool is the process's: a job of anything else running meanwhile
  // (on a loaded machine, a previous case's work ending late) counts too.
  // Up to 3 rounds, each with a key of its own: one without any job is the
  // proof; a call that used the pool would add a job to every round.
  int rounds_with_jobs = 0;
  for (int round = 0; round < 3; ++round) {
    const std::uint64_t jobs = weave::detail::store_pool().jobs();
    const std::string key = tag + "first" + std::to_string(round);
    Outcome first, again;
    net::co_spawn(io, payments.pay(key, 21, 0), record(first));
    io.restart();
    io.run();
    net::co_spawn(io, payments.pay(key, 21, 0), record(again));
    io.restart();
    io.run();
    REQUIRE(first.done);
    CHECK_FALSE(first.error);
    CHECK(first.value == 42);
    REQUIRE(again.done);
    CHECK_FALSE(again.error);
    CHECK(again.value == 42);  // replayed
    CHECK(payments.runs() == 2 + round);  // the warm-up and each round's first call
    if (weave::detail::store_pool().jobs() == jobs) break;
    ++rounds_with_jobs;
  }
  CHECK(rounds_with_jobs < 3);
}

TEST_CASE_METHOD(PaymentsCase, "async dedupe: a waiting duplicate cancelled through its slot ends at once", "[async]") {
  const std::string key = async_test::unique_name("cancel");
  Outcome first, duplicate;
  net::cancellation_signal cancel;
  bool first_done_at_cancel = true, duplicate_done_soon = false;
  net::co_spawn(io, payments.pay(key, 5, 1500), record(first));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (payments.runs() == 0) co_await asyncdedupe::sleep_for(1ms);
        net::co_spawn(io, payments.pay(key, 5, 0), net::bind_cancellation_slot(cancel.slot(), record(duplicate)));
        co_await asyncdedupe::sleep_for(100ms);  // it waits for the first call now
        first_done_at_cancel = first.done;
        cancel.emit(net::cancellation_type::terminal);
        co_await asyncdedupe::sleep_for(50ms);
        duplicate_done_soon = duplicate.done;
      },
      net::detached);
  io.run();
  CHECK_FALSE(first_done_at_cancel);
  CHECK(duplicate_done_soon);  // long before the first call's 1.5 s
  CHECK(duplicate.aborted());
  CHECK(first.done);
  CHECK_FALSE(first.error);
  CHECK(first.value == 10);
  CHECK(payments.runs() == 1);
}

TEST_CASE_METHOD(PaymentsCase,
                 "async dedupe: a first call that throws is forgotten and its exception kept",
                 "[async]") {
  const std::string key = async_test::unique_name("declined");
  Outcome first, retry;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        try {
          co_await payments.pay(key, -1, 1);
        } catch (...) {
          first.error = std::current_exception();
        }
        first.done = true;
        retry.value = co_await payments.pay(key, 3, 1);  // forgotten: it runs again
        retry.done = true;
      },
      net::detached);
  io.run();
  REQUIRE(first.done);
  CHECK_THROWS_AS(std::rethrow_exception(first.error), asyncdedupe::Declined);
  CHECK(retry.done);
  CHECK(retry.value == 6);
  CHECK(payments.runs() == 2);
}

TEST_CASE_METHOD(PaymentsCase,
                 "async dedupe: a first call whose caller cancels once its body's last operation completed keeps its outcome",
                 "[async]") {
  // The cancellation found nothing left to cancel: the call returns its
  // value, its outcome is stored, and the same key's next call is its replay.
  const std::string key = async_test::unique_name("cancelled-late");
  net::cancellation_signal cancel;
  payments.last_turn = [&] { cancel.emit(net::cancellation_type::terminal); };
  Outcome first, again;
  net::co_spawn(io, payments.pay_past(key, 4), net::bind_cancellation_slot(cancel.slot(), record(first)));
  io.run();
  REQUIRE(first.done);
  CHECK_FALSE(first.error);
  CHECK(first.value == 8);
  io.restart();
  net::co_spawn(io, payments.pay_past(key, 5), record(again));
  io.run();
  REQUIRE(again.done);
  CHECK_FALSE(again.error);
  CHECK(again.value == 8);  // replayed
  CHECK(payments.runs() == 1);
}

TEST_CASE_METHOD(PaymentsCase,
                 "async dedupe: a first call cancelled while it runs is forgotten at once, and a retry runs",
                 "[async]") {
  const std::string key = async_test::unique_name("cancelled");
  net::cancellation_signal cancel;
  Outcome first, retry;
  net::co_spawn(io, payments.pay(key, 4, 60'000), net::bind_cancellation_slot(cancel.slot(), record(first)));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (payments.runs() == 0) co_await asyncdedupe::sleep_for(1ms);
        co_await asyncdedupe::sleep_for(5ms);  // (the body waits on its timer by now)
        cancel.emit(net::cancellation_type::terminal);
        while (!first.done) co_await asyncdedupe::sleep_for(1ms);
        // Not a duplicate of a call still running (which would wait its 10 s, then be refused):
        // the cancelled call's claim is gone.
        retry.value = co_await payments.pay(key, 3, 1);
        retry.done = true;
      },
      net::detached);
  io.run();
  REQUIRE(first.done);
  CHECK(first.aborted());
  CHECK(retry.done);
  CHECK(retry.value == 6);
  CHECK(payments.runs() == 2);
}
