// weave::Semaphore on the store under test: at most `permits` holders at
// once, FIFO waiters woken by releases, permits as renewed leases, and (on
// the Redis stores) holders in other processes that are killed or stopped.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "quota/quota_runtime.h"
#include "quota/semaphore_store.h"
#include "quota_suite.h"
#include "weave/error.h"
#include "weave/quota.h"
#include "weave/redis_acl.h"
#include "weave/semaphore.h"

#include "eventually.h"
#include "redis_server.h"
#include "store/executor.h"
#include "store/open.h"
#include "store/reply.h"

using namespace std::chrono_literals;
using quota_test::fresh_key;
using Clock = std::chrono::steady_clock;

namespace {

weave::Semaphore semaphore(std::chrono::milliseconds lease = 30s, std::chrono::milliseconds place = 3s) {
  weave::configure_quota({.url = test_store_url(), .permit_lease = lease, .line_place = place});
  return weave::Semaphore();
}

}  // namespace

TEST_CASE("semaphore: at most `permits` holders at once, each with a higher fencing token") {
  auto sem = semaphore();
  const std::string key = fresh_key("three");
  std::vector<weave::Permit> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(sem.try_acquire(key, {.permits = 3}));
    REQUIRE(held.back());
    if (i > 0) CHECK(held[i]->fencing_token() > held[i - 1]->fencing_token());
    CHECK(held[i]->key() == key);
  }
  CHECK_FALSE(sem.try_acquire(key, {.permits = 3}));
  CHECK_THROWS_AS(sem.acquire(key, {.permits = 3}), weave::SemaphoreBusy);
  CHECK(held[1].release());
  weave::Permit again = sem.try_acquire(key, {.permits = 3});
  REQUIRE(again);
  CHECK(again->fencing_token() > held[2]->fencing_token());
  CHECK(held[1].operator bool() == false);
}

TEST_CASE("semaphore: a permit given back by its Permit's destruction is free at once") {
  auto sem = semaphore();
  const std::string key = fresh_key("scope");
  {
    weave::Permit p = sem.acquire(key, {.permits = 1});
    CHECK_FALSE(sem.try_acquire(key, {.permits = 1}));
  }
  CHECK(sem.try_acquire(key, {.permits = 1}));
}

TEST_CASE("semaphore: a waiter is woken by the release, not by polling") {
  // Places last 60 s (asked again every 20 s) and the holder's lease 60 s:
  // nothing but the release can let the waiter in within the test's time.
  auto sem = semaphore(60s, 60s);
  const std::string key = fresh_key("woken");
  weave::Permit holder = sem.acquire(key, {.permits = 1});
  std::atomic<bool> got{false};
  std::thread waiter([&] { got = static_cast<bool>(sem.try_acquire(key, {.permits = 1, .wait = 15s})); });
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(got.load());
  const auto released = Clock::now();
  holder.release();
  waiter.join();
  CHECK(got.load());
  CHECK(Clock::now() - released < 10s);  // not at a poll 20 s away
}

TEST_CASE("semaphore: waiters get freed permits in arrival order") {
  auto sem = semaphore();
  const std::string key = fresh_key("fifo");
  weave::Permit holder = sem.acquire(key, {.permits = 1});
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 5; ++i) {
    waiters.emplace_back([&, i] {
      weave::Permit p = sem.acquire(key, {.permits = 1, .wait = 20s});
      {
        const std::lock_guard<std::mutex> lock(m);
        order.push_back(i);
      }
      std::this_thread::sleep_for(50ms);
    });
    std::this_thread::sleep_for(200ms);  // each in line before the next comes
  }
  holder.release();
  for (std::thread& t : waiters) t.join();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("semaphore: a waiter that gives up leaves the line") {
  auto sem = semaphore(30s, 30s);  // a place left behind would block the key for 30 s
  const std::string key = fresh_key("gave-up");
  weave::Permit holder = sem.acquire(key, {.permits = 1});
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1, .wait = 200ms}));
  holder.release();
  CHECK(sem.try_acquire(key, {.permits = 1}));  // no waiter ahead any more
}

TEST_CASE("semaphore store: a release grants its permit to the first waiter, which passes it on if it gives up") {
  using weave::detail::PermitRequest;
  using WaitOn = weave::detail::SemaphoreStore::WaitOn;
  const auto rt = std::make_shared<weave::detail::QuotaRuntime>(weave::QuotaOptions{.url = test_store_url()});
  weave::detail::SemaphoreStore& store = rt->semaphores();
  // A thread waits on a connection of its own (Redis: its inbox); a
  // coroutine's waiter is the key's subscription.
  const WaitOn how = GENERATE(WaitOn::this_thread, WaitOn::callback);
  CAPTURE(how == WaitOn::this_thread ? "this_thread" : "callback");
  const std::string key = fresh_key("granted");
  std::string b_owner = "owner-b";
  const std::unique_ptr<weave::detail::PermitWaiter> b_waits = store.prepare_wait(key, b_owner, how);
  if (how == WaitOn::this_thread && !test_store_is_mem())
    CHECK(b_owner == "owner-b+");  // marked: told in its inbox
  else
    CHECK(b_owner == "owner-b");
  const PermitRequest a{key, "owner-a", 1, 30s, 3s}, b{key, b_owner, 1, 30s, 3s}, c{key, "owner-c", 1, 30s, 3s};
  REQUIRE(store.acquire(a).granted);
  CHECK_FALSE(store.acquire(b).granted);  // first in line
  CHECK_FALSE(store.acquire(c).granted);  // behind it
  CHECK(store.release(a));
  // Nobody asked since: the release made b a holder, for its place's time.
  auto holders = [&] {
    const auto states = store.list(key);
    REQUIRE(states.size() == 1);
    return states[0].holders;
  };
  REQUIRE(holders().size() == 1);
  CHECK(holders()[0].owner == b_owner);
  CHECK(holders()[0].expires_in <= 3s);
  const std::uint64_t b_token = holders()[0].fencing_token;
  REQUIRE(b_waits->wait_until(Clock::now() + 5s));
  const std::optional<std::uint64_t> told = b_waits->take_grant();
  if (test_store_is_mem()) {
    CHECK_FALSE(told);  // (b's next request returns it)
  } else {
    REQUIRE(told);  // the release's message named b and its token
    CHECK(*told == b_token);
  }
  CHECK_FALSE(store.acquire(c).granted);  // b holds the one permit
  // b gives up before it took the grant: the permit goes on to c.
  store.leave_line(b);
  REQUIRE(holders().size() == 1);
  CHECK(holders()[0].owner == "owner-c");
  const weave::detail::PermitGrant for_c = store.acquire(c);  // asks again: the same grant, a full lease now
  REQUIRE(for_c.granted);
  CHECK(for_c.fencing_token > b_token);
  CHECK(holders()[0].expires_in > 3s);
  CHECK(store.release(c));
  CHECK(store.list(key).empty());
}

TEST_CASE("semaphore: more waiting threads than own connections are all served, in order, one at a time") {
  auto sem = semaphore();
  const std::string key = fresh_key("crowd");
  weave::Permit holder = sem.acquire(key, {.permits = 1});
  // Those past the node's own connections wait on the subscription.
  constexpr int kWaiters = weave::store::kWaitingConnections + 4;
  std::mutex m;
  std::vector<int> order;
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      weave::Permit p = sem.acquire(key, {.permits = 1, .wait = 60s});
      most = std::max(most.load(), ++inside);
      {
        const std::lock_guard<std::mutex> lock(m);
        order.push_back(i);
      }
      --inside;
    });
    // Each in line before the next comes (two lines: the waiter's place).
    REQUIRE(test_support::eventually([&] {
      const auto states = sem.list(key);
      return states.size() == 1 && states[0].waiting == static_cast<std::size_t>(i + 1);
    }));
  }
  holder.release();
  for (std::thread& t : waiters) t.join();
  std::vector<int> arrival(kWaiters);
  for (int i = 0; i < kWaiters; ++i) arrival[i] = i;
  CHECK(order == arrival);
  CHECK(most.load() == 1);
}

TEST_CASE("semaphore: a thread waiting on its own connection still gets the permit when that connection is cut",
          "[redis]") {
  auto sem = semaphore(30s, 30s);  // places asked for again every 10 s: not what lets it in
  const std::string key = fresh_key("cut-inbox");
  weave::Permit holder = sem.acquire(key, {.permits = 1});
  std::atomic<bool> got{false};
  std::jthread waiter([&] { got = static_cast<bool>(sem.try_acquire(key, {.permits = 1, .wait = 120s})); });
  const auto admin = weave::store::open_executor(test_admin_url(), {});
  // The waiter's blocking pops (`kill`: each cut by the server, so the
  // client sees EOF).
  auto pops = [&](bool kill) {
    int n = 0;
    admin->for_each_master([&](weave::store::NodeExecutor& node) {
      const weave::store::Reply list = node.command(weave::store::Command{"CLIENT", "LIST"});
      const std::string text(weave::store::ReplyView(list, "client list").text());
      std::size_t at = 0;
      while ((at = text.find("id=", at)) != std::string::npos) {
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(at, end - at);
        at = end;
        if (line.find("cmd=blpop") == std::string::npos || line.find("flags=b") == std::string::npos) continue;
        if (kill) node.command(weave::store::Command{"CLIENT", "KILL", "ID", line.substr(3, line.find(' ') - 3)});
        ++n;
      }
    });
    return n;
  };
  REQUIRE(test_support::eventually([&] { return pops(/*kill=*/true) == 1; }));
  // It waits again, blocked on a new connection, before the release.
  REQUIRE(test_support::eventually([&] {
    const auto states = sem.list(key);
    return states.size() == 1 && states[0].waiting == 1 && pops(/*kill=*/false) == 1;
  }));
  const auto released = Clock::now();
  holder.release();
  waiter.join();
  CHECK(got.load());
  CHECK(Clock::now() - released < 5s);  // woken by the release, not at its next ask 10 s away
}

TEST_CASE("semaphore: with an ACL rule without BLPOP a waiting thread is still granted the permit", "[redis]") {
  const std::string admin = test_admin_url();
  if (!admin.starts_with("redis://")) return;  // (one server: the user is made on it)
  // The rule of a Weave from before waiting threads popped their inboxes.
  std::vector<std::string> setuser{"ACL", "SETUSER", "weave-no-blpop", "reset", "on", ">pw"};
  std::istringstream rule(weave::redis_acl_rule());
  for (std::string token; rule >> token;)
    if (token != "+blpop") setuser.push_back(token);
  const auto exec = weave::store::open_executor(admin, {});
  weave::store::Command c;
  for (const std::string& s : setuser) c.add(s);
  exec->for_each_master([&](weave::store::NodeExecutor& n) { n.command(c); });
  std::string address = admin.substr(std::string_view("redis://").size());
  address = address.substr(address.find('@') + 1);  // (npos + 1: from the start)
  weave::Semaphore sem(weave::QuotaOptions{.url = "redis://weave-no-blpop:pw@" + address, .line_place = 3s});
  const std::string key = fresh_key("no-blpop");
  for (int round = 0; round < 2; ++round) {  // the first waiter meets the refusal, the second subscribes
    weave::Permit holder = sem.acquire(key, {.permits = 1});
    std::atomic<bool> got{false};
    std::jthread waiter([&] { got = static_cast<bool>(sem.try_acquire(key, {.permits = 1, .wait = 20s})); });
    REQUIRE(test_support::eventually([&] {
      const auto states = sem.list(key);
      return states.size() == 1 && states[0].waiting == 1;
    }));
    std::this_thread::sleep_for(100ms);  // (in its wait)
    const auto released = Clock::now();
    holder.release();
    waiter.join();
    CHECK(got.load());
    CHECK(Clock::now() - released < 5s);  // at its next request at the latest (a third of its place), not its wait's end
  }
}

TEST_CASE("semaphore: a held permit is renewed past its lease, and stays exclusive") {
  auto sem = semaphore(300ms);
  const std::string key = fresh_key("renewed");
  weave::Permit p = sem.acquire(key, {.permits = 1});
  std::this_thread::sleep_for(1200ms);  // four leases
  CHECK_FALSE(p->lost());
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1}));
  CHECK(p.release());
}

TEST_CASE("semaphore: concurrent callers never hold more than `permits` at once") {
  auto sem = semaphore();
  const std::string key = fresh_key("bound");
  std::atomic<int> inside{0}, most{0}, granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 15; ++i) {
        weave::Permit p = sem.acquire(key, {.permits = 2, .wait = 30s});
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(2ms);
        --inside;
        ++granted;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(granted.load() == 90);
  CHECK(most.load() == 2);
}

TEST_CASE("semaphore: list() shows each key's holders by fencing token and its waiters") {
  auto sem = semaphore();
  const std::string key = fresh_key("listed");
  weave::Permit a = sem.acquire(key, {.permits = 2});
  weave::Permit b = sem.acquire(key, {.permits = 2});
  std::thread waiter([&] { (void)sem.try_acquire(key, {.permits = 2, .wait = 1500ms}); });
  std::this_thread::sleep_for(300ms);
  const std::vector<weave::SemaphoreState> found = sem.list(key);
  REQUIRE(found.size() == 1);
  CHECK(found[0].key == key);
  REQUIRE(found[0].holders.size() == 2);
  CHECK(found[0].holders[0].owner == a->owner_token());
  CHECK(found[0].holders[0].fencing_token == a->fencing_token());
  CHECK(found[0].holders[1].owner == b->owner_token());
  CHECK(found[0].holders[1].expires_in > 25s);
  CHECK(found[0].waiting == 1);
  waiter.join();
  a.release();
  b.release();
  CHECK(sem.list(key).empty());
}

TEST_CASE("semaphore: a bad key or spec is a UsageError naming the key") {
  auto sem = semaphore();
  CHECK_THROWS_AS(sem.try_acquire("", {.permits = 1}), weave::UsageError);
  CHECK_THROWS_WITH(sem.try_acquire("jobs", {.permits = 0}), Catch::Contains("'jobs'") && Catch::Contains("permits"));
  CHECK_THROWS_WITH(sem.try_acquire("jobs", {.permits = 1, .wait = -1ms}), Catch::Contains("wait"));
  CHECK_THROWS_WITH(sem.try_acquire(std::string(5000, 'k'), {.permits = 1}), Catch::Contains("max_key_bytes"));
  weave::Permit empty;
  CHECK_THROWS_AS(empty.release(), weave::UsageError);
}

TEST_CASE("semaphore: stats count grants, waits, refusals and releases") {
  auto sem = semaphore();
  const std::string key = fresh_key("counted");
  const weave::QuotaStats before = weave::quota_stats();
  weave::Permit p = sem.acquire(key, {.permits = 1});
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1, .wait = 100ms}));
  p.release();
  const weave::QuotaStats after = weave::quota_stats();
  CHECK(after.permits_acquired - before.permits_acquired == 1);
  CHECK(after.permits_busy - before.permits_busy == 1);
  CHECK(after.permits_released - before.permits_released == 1);
  CHECK(after.permits_lost == before.permits_lost);
}

namespace {

std::unique_ptr<redis_test::Child> worker(const std::vector<std::string>& args) {
  std::vector<std::string> argv{WEAVE_SEMAPHORE_WORKER};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<redis_test::Child>(argv);
}

}  // namespace

TEST_CASE("semaphore: a SIGKILLed holder's permit comes back within its lease + 1 s", "[redis]") {
  auto sem = semaphore();
  const std::string key = fresh_key("killed");
  auto holder = worker({test_store_url(), key, "1", "1000", "hold"});
  const auto first = holder->line();
  REQUIRE(first);
  REQUIRE(first->rfind("HELD ", 0) == 0);
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1}));
  holder->signal(SIGKILL);
  weave::Permit p = sem.try_acquire(key, {.permits = 1, .wait = 2s});  // lease 1 s + 1 s
  REQUIRE(p);
  CHECK(p->fencing_token() > std::stoull(first->substr(5)));
  CHECK(weave::quota_stats().permits_reclaimed >= 1);
}

TEST_CASE("semaphore: a SIGSTOPped holder's permit comes back, and the holder finds it lost when it resumes", "[redis]") {
  auto sem = semaphore();
  const std::string key = fresh_key("stopped");
  auto holder = worker({test_store_url(), key, "1", "1000", "hold"});
  const auto first = holder->line();
  REQUIRE(first);
  REQUIRE(first->rfind("HELD ", 0) == 0);
  holder->signal(SIGSTOP);
  weave::Permit p = sem.try_acquire(key, {.permits = 1, .wait = 2s});
  REQUIRE(p);
  holder->signal(SIGCONT);
  holder->send("check");
  CHECK(holder->line() == std::optional<std::string>("LOST 1"));
  holder->send("release");
  CHECK(holder->line() == std::optional<std::string>("RELEASE 0"));
  CHECK_FALSE(p->lost());  // the resumed holder's release did not take it
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1}));
}

TEST_CASE("semaphore: a free permit goes to the waiter first in line, which holds the line up for its place at most", "[redis]") {
  auto sem = semaphore();  // places last 3 s
  const std::string key = fresh_key("line");
  auto holder = worker({test_store_url(), key, "1", "30000", "hold"});
  REQUIRE(holder->line().value_or("").rfind("HELD ", 0) == 0);
  auto waiter = worker({test_store_url(), key, "1", "30000", "hold"});  // waits in line
  std::this_thread::sleep_for(500ms);
  waiter->signal(SIGSTOP);  // in line, and asking no more
  holder->send("release");
  CHECK(holder->line() == std::optional<std::string>("RELEASE 1"));
  // The release granted the permit to the waiter ahead, for its place's
  // time: a newcomer that does not wait is refused, one that waits gets it
  // once that grant ran out unrenewed.
  const auto states = sem.list(key);
  REQUIRE(states.size() == 1);
  REQUIRE(states[0].holders.size() == 1);
  CHECK(states[0].holders[0].expires_in <= 3s);
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1}));
  const auto asked = Clock::now();
  weave::Permit p = sem.try_acquire(key, {.permits = 1, .wait = 10s});
  REQUIRE(p);
  CHECK(Clock::now() - asked > 1s);
  waiter->signal(SIGKILL);
}

TEST_CASE("semaphore: a waiter the release granted a permit keeps it past its place, renewed", "[redis]") {
  auto sem = semaphore();  // places last 3 s
  const std::string key = fresh_key("renewed-grant");
  auto holder = worker({test_store_url(), key, "1", "30000", "hold"});
  const auto first = holder->line();
  REQUIRE(first.value_or("").rfind("HELD ", 0) == 0);
  auto waiter = worker({test_store_url(), key, "1", "30000", "hold"});
  std::this_thread::sleep_for(500ms);  // in line
  holder->send("release");
  CHECK(holder->line() == std::optional<std::string>("RELEASE 1"));
  const auto second = waiter->line();
  REQUIRE(second.value_or("").rfind("HELD ", 0) == 0);
  CHECK(std::stoull(second->substr(5)) > std::stoull(first->substr(5)));
  std::this_thread::sleep_for(4s);  // past the grant's first term (a place: 3 s)
  waiter->send("check");
  CHECK(waiter->line() == std::optional<std::string>("LOST 0"));
  const auto states = sem.list(key);
  REQUIRE(states.size() == 1);
  REQUIRE(states[0].holders.size() == 1);
  CHECK(states[0].holders[0].expires_in > 3s);  // renewed to a full lease
  CHECK_FALSE(sem.try_acquire(key, {.permits = 1}));
  waiter->send("release");
  CHECK(waiter->line() == std::optional<std::string>("RELEASE 1"));
}

TEST_CASE("semaphore: processes sharing a key never hold more than `permits` at once", "[redis]") {
  const std::string key = fresh_key("processes");
  std::vector<std::unique_ptr<redis_test::Child>> workers;
  for (int i = 0; i < 4; ++i) workers.push_back(worker({test_store_url(), key, "2", "5000", "cycle", "12", "15"}));
  struct Held {
    long long from, to;
  };
  std::vector<Held> held;
  for (auto& w : workers) {
    for (;;) {
      const auto line = w->line();
      REQUIRE(line);
      if (*line == "DONE") break;
      INFO(*line);
      REQUIRE(line->rfind("HELD ", 0) == 0);
      CHECK(line->find("LOST") == std::string::npos);
      Held h{};
      REQUIRE(std::sscanf(line->c_str(), "HELD %lld %lld", &h.from, &h.to) == 2);
      held.push_back(h);
    }
  }
  REQUIRE(held.size() == 48);
  int most = 0;
  for (const Held& h : held) {  // holders at the moment each hold began
    const int at = static_cast<int>(std::count_if(held.begin(), held.end(), [&](const Held& o) { return o.from <= h.from && h.from < o.to; }));
    most = std::max(most, at);
  }
  CHECK(most <= 2);
  CHECK(most >= 1);
}
