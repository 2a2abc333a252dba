// [[lock]] on asynchronous methods (src/lock/asio/), woven by weavegen
// (async_ledger.h), on every store of the suite: one holder at a time among
// thousands of coroutines, no thread per waiter, ownership by the call (two
// coroutines on one thread do not share a lock; a body resumed on another
// thread releases), reentrancy across co_await, cancellation while waiting,
// while holding and in the middle of acquiring, a lost lease cancelling the
// body, exceptions kept, release when the coroutine is destroyed unresumed.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "async/blocking_pool.h"
#include "async_ledger.weave.h"
#include "async_test_support.h"
#include "store/open.h"
#include "store/reply.h"
#include "weave/asio.h"
#include "weave/lock.h"
#include "weave/woven.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using asynclock::Ledger;
using asynclock::Probe;

namespace {

using async_test::Outcome;
using async_test::record;
using async_test::run_threads;

// Every case locks its own accounts (keys are unique per case and store).
std::string account(const std::string& name) { return async_test::unique_name(name); }

// What a call's weave::LeaseLost says; any other exception fails the case,
// naming its type.
std::string lease_lost_what(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const weave::LeaseLost& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("not a LeaseLost: " << typeid(e).name() << ": " << e.what());
  } catch (...) {
    FAIL("not a LeaseLost, not a std::exception");
  }
  return {};
}

struct Configured {
  explicit Configured(weave::LockOptions o = {}) {
    o.url = test_store_url();
    weave::configure_locks(std::move(o));
  }
  ~Configured() { weave::configure_locks({}); }
};

// Most cases: locks on the suite's store, a Ledger whose calls a Probe
// watches, and an io_context the case runs (on its own thread unless it
// says otherwise).
struct LedgerCase {
  Configured configured;
  Probe probe;
  weave::Woven<Ledger> ledger{&probe};
  net::io_context io;
};

// Scripts the server ran (EVALSHA and EVAL calls, from INFO commandstats), on
// a single redis:// node; -1 elsewhere.
long long scripts_run() {
  if (test_store_url().rfind("redis://", 0) != 0) return -1;
  auto exec = weave::store::open_executor(test_admin_url(), {});
  weave::store::Reply r = exec->command(weave::store::Command{"INFO", "commandstats"}, "any", "test info");
  const std::string info(weave::store::ReplyView(r, "test info").text());
  long long calls = 0;
  for (const char* name : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="})
    if (const auto at = info.find(name); at != std::string::npos) calls += std::stoll(info.substr(at + std::strlen(name)));
  return calls;
}

bool key_held(const std::string& key) {
  const std::optional<weave::LockState> s = weave::default_lock_client().lock_state(key);
  return s && !s->holders.empty();
}

std::size_t key_line(const std::string& key) {
  const std::optional<weave::LockState> s = weave::default_lock_client().lock_state(key);
  return s ? s->line.size() : 0;
}

}  // namespace

TEST_CASE("async lock: thousands of coroutines on one key hold it one at a time, with no thread per waiter",
          "[async]") {
  Configured c;
  Probe probe;
  weave::Woven<Ledger> ledger(&probe);
  const std::string id = account("many");
  constexpr int kCalls = 10'000;
  net::io_context io;
  std::atomic<int> done{0}, most_threads{0};
  for (int i = 0; i < kCalls; ++i)
    net::co_spawn(io, ledger.add(id, 1, 0), [&](std::exception_ptr e, long) {
      if (!e) ++done;
    });
  // Samples the process's threads while the calls wait and run.
  std::atomic<bool> sampling{true};
  std::thread sampler([&] {
    while (sampling) {
      most_threads = std::max(most_threads.load(), async_test::process_threads());
      std::this_thread::sleep_for(5ms);
    }
  });
  const int before = async_test::process_threads();
  const long long scripts_before = scripts_run();
  run_threads(io, 4);
  const long long scripts = scripts_run() - scripts_before;
  sampling = false;
  sampler.join();
  CHECK(done == kCalls);
  CHECK(probe.most_inside == 1);
  CHECK(probe.fence_out_of_order == 0);
  CHECK(probe.wrong_lease == 0);
  CHECK(ledger.total() == kCalls);
  // 4 io threads, the sampler, and a fixed few of Weave's (the store pool's 8
  // at most, the Pub/Sub reader, the renewer): never one per waiter.
  INFO("threads before " << before << ", at most " << most_threads.load());
  CHECK(most_threads <= before + 3 + 8 + 4);
  CHECK_FALSE(key_held("acct:" + id));
  // Store commands grow with the acquisitions, not with waiters x time: an
  // acquire and a release each, and a retry per release the leader heard.
  if (scripts_before >= 0) {
    INFO("scripts run: " << scripts);
    CHECK(scripts <= 4LL * kCalls);
  }
}

TEST_CASE_METHOD(LedgerCase,
                 "async lock: an uncontended call and a refused try send their round trips "
                 "from the caller's own thread",
                 "[async]") {
  // redis:// and redis+cluster:// send the acquire and the release from the
  // io_context's thread (store/asio/async_run.h), mem:// runs them inline: no job
  // for the store pool's threads, the four thread hand-offs they cost.
  const std::string id = account("own-thread");
  Outcome warm;
  net::co_spawn(io, ledger.add(id, 1, 0), record(warm));  // connects and loads the scripts
  io.run();
  REQUIRE(warm.done);
  REQUIRE_FALSE(warm.error);
  const std::uint64_t jobs = weave::detail::store_pool().jobs();
  Outcome first, holder;
  std::optional<std::optional<long>> refused;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<long> {
        co_await ledger.add(id, 1, 0);
        co_await ledger.add(id, 1, 0);
        // Held by another call: try_add (no wait) is refused after one try.
        net::co_spawn(io, ledger.add(id, 1, 50), record(holder));
        while (probe.entered < 4) co_await asynclock::sleep_for(1ms);
        refused = co_await ledger.try_add(id);
        co_return 0L;
      },
      record(first));
  io.restart();
  io.run();
  REQUIRE(first.done);
  CHECK_FALSE(first.error);
  REQUIRE(holder.done);
  CHECK_FALSE(holder.error);
  REQUIRE(refused.has_value());
  CHECK(*refused == std::nullopt);
  CHECK(ledger.total() == 4);
  CHECK(weave::detail::store_pool().jobs() == jobs);
  CHECK_FALSE(key_held("acct:" + id));
}

TEST_CASE_METHOD(LedgerCase,
                 "async lock: a call that took its key without waiting keeps its client while it holds the key, "
                 "through a reconfiguration",
                 "[async]") {
  // The call's lease is held across suspensions: the runtime it was taken
  // with must live until its release, though configure_locks() replaced it
  // and the thread's next call dropped the thread's copy meanwhile (on
  // mem:// the key is taken inline, on this thread; the sanitizers see a
  // release through a freed client).
  const std::string id = account("reconfigured");
  Outcome holder, other;
  net::co_spawn(io, ledger.hold_no_wait(id, 200), record(holder));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<long> {
        while (probe.entered == 0) co_await asynclock::sleep_for(1ms);  // the first call holds the key
        weave::LockOptions o;
        o.url = test_store_url();
        weave::configure_locks(o);
        const std::optional<long> r = co_await ledger.try_add(account("reconfigured-other"));  // the new runtime's
        co_return r ? 1L : 0L;
      },
      record(other));
  io.run();
  REQUIRE(holder.done);
  CHECK_FALSE(holder.error);
  REQUIRE(other.done);
  CHECK_FALSE(other.error);
  CHECK(probe.wrong_lease == 0);
  CHECK_FALSE(key_held("acct:" + id));  // given back
}

TEST_CASE_METHOD(LedgerCase, "async lock: two coroutines on one thread never share a lock", "[async]") {
  const std::string id = account("one-thread");  // (one thread runs both calls)
  Outcome holder;
  std::optional<std::optional<long>> other;
  net::co_spawn(io, ledger.add(id, 1, 200), record(holder));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (probe.entered == 0) co_await asynclock::sleep_for(1ms);  // the first call holds the key now
        other = co_await ledger.try_add(id);
      },
      net::detached);
  io.run();
  REQUIRE(holder.done);
  CHECK_FALSE(holder.error);
  REQUIRE(other.has_value());
  CHECK(*other == std::nullopt);  // busy: the other coroutine's lease is not this one's
}

TEST_CASE_METHOD(LedgerCase,
                 "async lock: a body resumed on other threads releases, and a nested call re-enters its lease",
                 "[async]") {
  const std::string id = account("reenter");
  std::vector<Outcome> outcomes(20);
  for (auto& o : outcomes) net::co_spawn(io, ledger.transfer(id), record(o));
  const weave::LockStats before = weave::default_lock_client().stats();
  run_threads(io, 4);
  for (auto& o : outcomes) {
    CHECK(o.done);
    CHECK_FALSE(o.error);
  }
  CHECK(ledger.total() == 20 * 100);
  CHECK(probe.wrong_lease == 0);
  CHECK(probe.most_inside == 1);
  const weave::LockStats after = weave::default_lock_client().stats();
  CHECK(after.reentered - before.reentered == 20);  // each nested add() re-entered its caller's lease
  CHECK(after.acquired - before.acquired == 20);
  CHECK(after.released - before.released == 20);
  CHECK_FALSE(key_held("acct:" + id));
}

TEST_CASE_METHOD(LedgerCase,
                 "async lock: a waiter cancelled through its cancellation slot ends at once and leaves nothing behind",
                 "[async]") {
  const std::string id = account("cancel-wait");
  Outcome holder, waiter;
  net::cancellation_signal cancel;
  net::co_spawn(io, ledger.add(id, 1, 1500), record(holder));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (probe.entered == 0) co_await asynclock::sleep_for(1ms);
        net::co_spawn(io, ledger.add(id, 1, 0), net::bind_cancellation_slot(cancel.slot(), record(waiter)));
        co_await asynclock::sleep_for(100ms);  // it waits for the key now
        cancel.emit(net::cancellation_type::terminal);
        co_await asynclock::sleep_for(50ms);
        CHECK(waiter.done);         // ended long before the holder's 1.5 s
        CHECK_FALSE(holder.done);
      },
      net::detached);
  io.run();
  CHECK(waiter.aborted());
  CHECK(holder.done);
  CHECK_FALSE(holder.error);
  CHECK(probe.entered == 1);  // the cancelled call never ran
  CHECK_FALSE(key_held("acct:" + id));
  CHECK(key_line("acct:" + id) == 0);
}

TEST_CASE_METHOD(LedgerCase,
                 "async lock: a holder cancelled through its cancellation slot gives the key back at once",
                 "[async]") {
  const std::string id = account("cancel-hold");
  Outcome holder;
  net::cancellation_signal cancel;
  bool held_when_cancelled = false, held_after = true;
  net::co_spawn(io, ledger.add(id, 1, 60'000), net::bind_cancellation_slot(cancel.slot(), record(holder)));
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        while (probe.entered == 0) co_await asynclock::sleep_for(1ms);
        held_when_cancelled = key_held("acct:" + id);
        cancel.emit(net::cancellation_type::terminal);
        while (!holder.done) co_await asynclock::sleep_for(1ms);
        held_after = key_held("acct:" + id);
      },
      net::detached);
  io.run();
  CHECK(held_when_cancelled);
  CHECK(holder.aborted());
  CHECK_FALSE(held_after);  // released when the call ended, not at its ttl
}

TEST_CASE_METHOD(LedgerCase,
                 "async lock: a call cancelled in the middle of acquiring gives back the key it set",
                 "[async]") {
  const std::string id = account("cancel-acquire");
  Outcome call;
  net::cancellation_signal cancel;
  net::co_spawn(io, ledger.add(id, 1, 0), net::bind_cancellation_slot(cancel.slot(), record(call)));
  // Cancelled before it starts: the acquisition's store call runs (it cannot
  // be recalled; on mem:// it cannot be told apart from the cancellation),
  // sets the key, and the call gives it back instead of running the body.
  cancel.emit(net::cancellation_type::terminal);
  io.run();
  CHECK(call.aborted());
  // (mem:// takes the key without suspending: the cancellation reaches the
  // body's first co_await instead, which gives the key back as well.)
  if (!test_store_is_mem()) CHECK(probe.entered == 0);
  CHECK_FALSE(key_held("acct:" + id));
}

TEST_CASE("async lock: a lost lease cancels the body at its next co_await and the caller hears of the loss",
          "[async]") {
  // Runs `call` to its end on a one-thread io_context: it must fail with
  // LeaseLost, its body not gone on past the suspension the loss cancelled.
  auto ends_lost = [](const weave::Woven<Ledger>& ledger, net::awaitable<long> call) {
    net::io_context io;
    Outcome out;
    net::co_spawn(io, std::move(call), record(out));
    io.run();
    REQUIRE(out.error);
    CHECK_THROWS_AS(std::rethrow_exception(out.error), weave::LeaseLost);
    CHECK(ledger.after_loss() == 0);
  };
  SECTION("a fixed lease that ran out") {
    Configured c;
    weave::Woven<Ledger> ledger;
    ends_lost(ledger, ledger.overstay(account("lost-ttl"), 5'000));
  }
  SECTION("a fixed lease that ran out before the body first suspended") {
    Configured c;
    weave::Woven<Ledger> ledger;
    ends_lost(ledger, ledger.overstay_before_suspending(account("lost-before-suspending"), 450, 5'000));
  }
  SECTION("a fixed lease re-entered by a nested call that ended first") {
    Configured c;
    Probe probe;
    weave::Woven<Ledger> ledger(&probe);
    ends_lost(ledger, ledger.overstay_after_nested(account("lost-after-nested"), 5'000));
    CHECK(probe.exited == 1);  // the nested call ran (on the same lease) and ended
  }
  SECTION("a renewed lease forced away by an operator") {
    weave::LockOptions o;
    o.watchdog_lease = 600ms;
    Configured c(o);
    Probe probe;
    weave::Woven<Ledger> ledger(&probe);
    const std::string id = account("lost-forced");
    net::io_context io;
    Outcome call;
    net::co_spawn(io, ledger.add_renewed(id, 10'000), record(call));
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          while (probe.entered == 0) co_await asynclock::sleep_for(1ms);
          weave::default_lock_client().force_unlock("acct:" + id);
        },
        net::detached);
    io.run();
    REQUIRE(call.error);
    CHECK_THROWS_AS(std::rethrow_exception(call.error), weave::LeaseLost);
    CHECK(probe.exited == 0);
  }
}

TEST_CASE("async lock: a loss heard on another thread as the call ends does not cancel the next call", "[async]") {
  // The first call's body has posted its continuation when its lease is
  // forced away and the renewer, on its own thread, finds it gone: the
  // cancellation is handed to the call's executor behind that continuation,
  // so the call ends first, and the next call, which reuses its cell (and
  // asio's memory for its slot's handler), is suspended when the
  // cancellation comes up. It must find the first call gone. (Emitted from
  // the renewer's thread, co_spawn would have posted it as `sig->emit()` on
  // the first call's handler, whose memory is the second's by then.)
  weave::LockOptions o;
  o.watchdog_lease = 300ms;  // renewed every 100 ms
  Configured c(o);
  Probe probe;
  weave::Woven<Ledger> ledger(&probe);
  net::io_context io;
  const std::string id = account("stale-loss"), next = account("stale-loss-next");
  Outcome first, second;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        try {
          first.value = co_await ledger.yield_once(id);
        } catch (...) {
          first.error = std::current_exception();
        }
        first.done = true;
        try {
          second.value = co_await ledger.add(next, 1, 50);
        } catch (...) {
          second.error = std::current_exception();
        }
        second.done = true;
      },
      net::detached);
  while (!ledger.yielding()) io.run_one();  // the body waits for its turn, its lease listened to
  weave::default_lock_client().force_unlock("acct:" + id);
  std::this_thread::sleep_for(400ms);  // the renewer finds the key gone meanwhile
  io.run();
  REQUIRE(first.done);
  REQUIRE(second.done);
  // The renewer heard the loss before the call ended (not its release).
  REQUIRE(first.error);
  CHECK_THROWS_WITH(std::rethrow_exception(first.error), Catch::Contains("a renewal found it"));
  CHECK_FALSE(second.aborted());
  CHECK_FALSE(second.error);
  CHECK_FALSE(key_held("acct:" + next));
}

TEST_CASE("async lock: forced unlocks across many calls on many threads reach only their own calls", "[async]") {
  // Every 7th key is forced away, again and again, while 400 calls hold
  // their keys on 4 threads for up to 450 ms: a call whose key was forced
  // hears of it at a renewal (on the renewer's thread) and its body is
  // cancelled, or at its release; a call whose key was not forced ends well,
  // whatever the cancellations meant for other calls whose cells it reuses.
  // (Run under ASan and TSan as well.)
  weave::LockOptions o;
  o.watchdog_lease = 600ms;  // renewed every 200 ms
  Configured c(o);
  weave::Woven<Ledger> ledger;
  constexpr int kCalls = 400;
  std::vector<std::string> ids;
  for (int i = 0; i < kCalls; ++i) ids.push_back(account("forced-" + std::to_string(i)));
  std::vector<Outcome> outcomes(kCalls);
  std::vector<std::atomic<bool>> forced(kCalls);
  net::io_context io;
  for (int i = 0; i < kCalls; ++i)
    net::co_spawn(io, ledger.hold_renewed(ids[i], (i % 10) * 50), record(outcomes[i]));
  std::atomic<bool> stop{false};
  std::thread forcer([&] {
    while (!stop) {
      for (int i = 0; i < kCalls && !stop; i += 7) {  // every 7th key only
        forced[i] = true;
        try {
          weave::default_lock_client().force_unlock("acct:" + ids[i]);
        } catch (const weave::TimeoutError&) {
          // a store slower than command_timeout: forced again next round
        }
      }
      std::this_thread::sleep_for(10ms);
    }
  });
  run_threads(io, 4);
  stop = true;
  forcer.join();
  int lost = 0, cancelled = 0;
  for (int i = 0; i < kCalls; ++i) {
    REQUIRE(outcomes[i].done);
    if (!outcomes[i].error) continue;
    ++lost;
    INFO("call " << i);
    CHECK(forced[i]);  // only its own key's loss ends a call
    if (lease_lost_what(outcomes[i].error).find("cancelled at its next co_await") != std::string::npos) ++cancelled;
  }
  INFO("lost " << lost << ", of which cancelled in the body " << cancelled);
  CHECK(cancelled > 0);  // losses heard on the renewer's thread did cancel bodies
}

TEST_CASE("async lock: a loss heard after the body's last operation completed is told at the release, which still runs",
          "[async]") {
  // The body cancelled nothing (its post had completed), so it returns; the
  // call ends as any call whose lease ran out during its body: a LeaseLost,
  // the key not left behind.
  Configured c;
  weave::Woven<Ledger> ledger;
  const std::string id = account("outlived");
  net::io_context io;
  Outcome call;
  net::co_spawn(io, ledger.outlive_lease(id), record(call));
  io.run();
  REQUIRE(call.done);
  REQUIRE(call.error);
  CHECK(lease_lost_what(call.error).find("acct:" + id) != std::string::npos);
  CHECK_FALSE(key_held("acct:" + id));
}

TEST_CASE("async lock: the body's exception reaches the caller unchanged and the key is given back", "[async]") {
  Configured c;
  weave::Woven<Ledger> ledger;
  const std::string id = account("declined");
  net::io_context io;
  Outcome call;
  net::co_spawn(io, ledger.decline(id), record(call));
  io.run();
  REQUIRE(call.error);
  CHECK_THROWS_AS(std::rethrow_exception(call.error), asynclock::Declined);
  CHECK_FALSE(key_held("acct:" + id));
}

TEST_CASE("async lock: a holder destroyed without resuming releases the key, and its waiters leave no trace",
          "[async]") {
  Configured c;
  Probe probe;
  weave::Woven<Ledger> ledger(&probe);
  const std::string id = account("destroyed");
  {
    net::io_context io;
    net::co_spawn(io, ledger.add(id, 1, 60'000), net::detached);
    io.run_for(100ms);  // it holds the key and waits on its timer
    REQUIRE(probe.entered == 1);
    // Two more: one leads this process's waiters (it waits for the release),
    // one waits for its turn behind it.
    net::co_spawn(io, ledger.add(id, 1, 0), net::detached);
    net::co_spawn(io, ledger.add(id, 1, 0), net::detached);
    io.run_for(100ms);
    REQUIRE(probe.entered == 1);
    REQUIRE(key_held("acct:" + id));
  }  // the io_context goes, and with it the suspended coroutines
  CHECK_FALSE(key_held("acct:" + id));
  // The key's local line is empty again: a new call takes the key at once.
  net::io_context io;
  Outcome next;
  net::co_spawn(io, ledger.add(id, 1, 0), record(next));
  io.run_for(5s);
  CHECK(next.done);
  CHECK_FALSE(next.error);
}
