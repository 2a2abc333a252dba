// The redis backend across real processes (lock_worker, fork/exec), with
// SIGKILL / SIGSTOP / SIGCONT. Each test case starts its own redis-server.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "fenced_store.h"
#include "redis_server.h"
#include "weave/error.h"
#include "weave/lock.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using redis_test::Child;
using redis_test::RedisServer;
using std::chrono::milliseconds;

namespace {

const std::string kWorker = WEAVE_LOCK_WORKER;

std::unique_ptr<Child> worker(std::vector<std::string> args) {
  args.insert(args.begin(), kWorker);
  return std::make_unique<Child>(args);
}

weave::LockClient client(const std::string& url, milliseconds lease = 30'000ms) {
  weave::LockOptions o;
  o.url = url;
  o.watchdog_lease = lease;
  return weave::LockClient(o);
}

std::string port_of(const RedisServer& s) { return std::to_string(s.port()); }

}  // namespace

TEST_CASE("redis mp: 4 processes x 2 threads x 500 non-atomic increments under one lock end at 4000",
          "[redis][multiprocess]") {
  RedisServer server;
  std::vector<std::unique_ptr<Child>> ws;
  for (int p = 0; p < 4; ++p)
    ws.push_back(worker({"counter", server.url(), port_of(server), "counter-lock", "counter", "2", "500"}));
  for (auto& w : ws) {
    auto l = w->line(120s);
    CHECK(l == std::optional<std::string>("DONE"));
    CHECK(w->wait() == 0);
  }
  CHECK(server.client().cmd({"GET", "counter"}).str == "4000");
}

TEST_CASE("redis mp: a fixed ttl runs out while held, another process gets in, the release deletes nothing",
          "[redis][multiprocess]") {
  RedisServer server;
  auto raw = server.client();
  auto holder = worker({"hold", server.url(), "exp", "200", "600", "30000"});
  auto first = holder->line();
  REQUIRE(first);
  REQUIRE(first->rfind("ACQUIRED ", 0) == 0);
  auto contender = client(server.url());
  auto h = contender.acquire("exp", {.ttl = 10s, .wait = 5s});  // gets in once the 200 ms ran out
  CHECK(h->fencing_token() > std::stoull(first->substr(9)));
  auto released = holder->line();
  REQUIRE(released);
  CHECK(released->rfind("LOST ", 0) == 0);
  CHECK(holder->wait() == 0);
  // The first holder's release did not delete the contender's lock.
  CHECK(raw.cmd({"GET", "{weave:lock:exp}"}).str == h->owner_token());
  CHECK_NOTHROW(h.release());
}

TEST_CASE("redis mp: a watchdog lease held 10x its length keeps another process out", "[redis][multiprocess]") {
  RedisServer server;
  auto raw = server.client();
  // Holds 3 s with a 300 ms watchdog lease.
  auto holder = worker({"hold", server.url(), "wd", "0", "3000", "300"});
  auto first = holder->line();
  REQUIRE(first);
  REQUIRE(first->rfind("ACQUIRED ", 0) == 0);
  auto contender = worker({"try", server.url(), "wd", "2000"});  // waits 2 s, within the hold
  CHECK(contender->line() == std::optional<std::string>("BUSY"));
  CHECK(holder->line() == std::optional<std::string>("RELEASED"));
  CHECK(holder->wait() == 0);
  CHECK(raw.cmd({"EXISTS", "{weave:lock:wd}"}).integer == 0);
  long long before = raw.calls("evalsha") + raw.calls("eval");
  std::this_thread::sleep_for(500ms);
  CHECK(raw.calls("evalsha") + raw.calls("eval") == before);
}

TEST_CASE("redis mp: a SIGKILLed holder's lock is taken over within the lease + 200 ms", "[redis][multiprocess]") {
  RedisServer server;
  const milliseconds lease = 1000ms;
  auto holder = worker({"hold", server.url(), "crash", "0", "60000", std::to_string(lease.count())});
  auto first = holder->line();
  REQUIRE(first);
  REQUIRE(first->rfind("ACQUIRED ", 0) == 0);
  std::this_thread::sleep_for(700ms);  // at least one renewal happened
  auto contender = client(server.url());
  auto t0 = Clock::now();
  holder->signal(SIGKILL);
  auto h = contender.acquire("crash", {.wait = 10s});
  auto took = Clock::now() - t0;
  CHECK(holder->wait() == 128 + SIGKILL);
  CHECK(took < lease + 200ms);
  CHECK(h->fencing_token() > std::stoull(first->substr(9)));
}

TEST_CASE("redis mp: a SIGSTOPped holder loses its lease, its stale write is fenced off", "[redis][multiprocess]") {
  RedisServer server;
  auto raw = server.client();
  const milliseconds lease = 500ms;
  auto holder = worker({"fenced", server.url(), port_of(server), "pause", std::to_string(lease.count()), "store"});
  auto first = holder->line();
  REQUIRE(first);
  REQUIRE(first->rfind("ACQUIRED ", 0) == 0);
  const auto old_token = std::stoull(first->substr(9));

  holder->signal(SIGSTOP);
  auto stopped_at = Clock::now();
  auto contender = client(server.url());
  auto h = contender.acquire("pause", {.wait = 5s});  // after the paused holder's lease ran out
  CHECK(h->fencing_token() > old_token);
  redis_test::FencedStore store(raw, "store");
  CHECK(store.write(h->fencing_token(), "second holder"));
  std::this_thread::sleep_until(stopped_at + 3 * lease);
  holder->signal(SIGCONT);
  holder->send("go");
  CHECK(holder->line() == std::optional<std::string>("STOP 1"));
  CHECK(holder->line() == std::optional<std::string>("WRITE rejected"));
  CHECK(holder->line() == std::optional<std::string>("RELEASE lost"));
  CHECK(holder->wait() == 0);
  CHECK(store.value() == "second holder");
  CHECK(raw.cmd({"GET", "{weave:lock:pause}"}).str == h->owner_token());  // still the second holder's
  h.release();
}

// A holder stopped past its lease and continued must see
// its stop token fired and lost() the moment it runs again (it used to see
// remaining() == 0 with both still quiet until the watchdog thread got round
// to it). On the child's own mem:// table and on redis://, fixed ttl and
// watchdog mode.
TEST_CASE("redis mp: a holder SIGSTOPped past its lease sees it lost the moment it continues",
          "[redis][multiprocess]") {
  RedisServer server;
  struct Case {
    std::string url, ttl;
  };
  for (const Case& c : {Case{"mem://", "1000"}, Case{"mem://", "0"}, Case{server.url(), "1000"},
                        Case{server.url(), "0"}}) {
    INFO(c.url << " ttl=" << c.ttl << " ms (0: watchdog mode, 1000 ms lease)");
    auto holder = worker({"pause", c.url, "paused-holder", c.ttl, "1000"});
    auto first = holder->line();
    REQUIRE(first);
    REQUIRE(first->rfind("ACQUIRED ", 0) == 0);
    holder->signal(SIGSTOP);  // well within its 1 s lease
    std::this_thread::sleep_for(2500ms);
    holder->signal(SIGCONT);
    auto seen = holder->line();
    REQUIRE(seen);
    CHECK_THAT(*seen, Catch::Matchers::StartsWith("SEEN stop=1 lost=1 cause=") &&
                          Catch::Matchers::Contains("ran out"));  // and says why
    CHECK(holder->line() == std::optional<std::string>("RELEASE lost"));
    CHECK(holder->wait() == 0);
  }
}

// [[lock(max_hold=1s)]] (tests/redis/jobs.h) on a method
// that ignores its stop token, in a child process with a 600 ms watchdog
// lease: renewed until 1 s, then left to run out; another process gets the
// key while the method still runs (it runs 4 s).
TEST_CASE("redis mp: a woven method that ignores its stop token loses its lock at max_hold and another process gets it",
          "[redis][multiprocess]") {
  RedisServer server;
  auto runner = worker({"runaway", server.url(), "r1", "600", "4000"});
  auto first = runner->line();
  REQUIRE(first);
  REQUIRE(first->rfind("RUNNING ", 0) == 0);
  const auto started = Clock::now();
  auto contender = worker({"try", server.url(), "runaway:r1", "8000"});
  CHECK(contender->line(10s) == std::optional<std::string>("ACQUIRED"));
  const auto got_in = Clock::now() - started;
  CHECK(got_in >= 800ms);  // not before max_hold (1 s from the runner's acquisition) ...
  CHECK(got_in < 3000ms);  // ... and well before the runner's method returned (4 s)
  auto stop = runner->line();
  REQUIRE(stop);
  CHECK_THAT(*stop, Catch::Matchers::StartsWith("STOP it was held past its max_hold of 1000 ms"));
  auto end = runner->line();
  REQUIRE(end);
  CHECK_THAT(*end, Catch::Matchers::StartsWith("HOLD_LIMIT retryable=0 max_hold=1000 weave: lease on 'runaway:r1'"));
  CHECK(runner->wait() == 0);
  CHECK(contender->wait() == 0);
}

TEST_CASE("redis mp: fencing tokens strictly increase in acquisition order across 4 processes",
          "[redis][multiprocess]") {
  RedisServer server;
  auto raw = server.client();
  std::vector<std::unique_ptr<Child>> ws;
  for (int p = 0; p < 4; ++p) ws.push_back(worker({"tokens", server.url(), port_of(server), "fence", "250", "order"}));
  std::vector<unsigned long long> all;
  for (auto& w : ws) {
    unsigned long long last = 0;
    for (auto& l : w->lines_until_eof()) {
      REQUIRE(l.rfind("T ", 0) == 0);
      auto t = std::stoull(l.substr(2));
      CHECK(t > last);  // increasing within the process
      last = t;
      all.push_back(t);
    }
    CHECK(w->wait() == 0);
  }
  REQUIRE(all.size() == 1000);
  // The list is appended under the lock, so it is the acquisition order.
  auto list = raw.cmd({"LRANGE", "order", "0", "-1"}).elements;
  REQUIRE(list.size() == 1000);
  for (std::size_t i = 1; i < list.size(); ++i) {
    INFO(i);
    REQUIRE(std::stoull(list[i].str) > std::stoull(list[i - 1].str));
  }
}

TEST_CASE("redis mp: 100,000 owner tokens from 4 processes are unique", "[redis][multiprocess]") {
  RedisServer server;
  std::vector<std::unique_ptr<Child>> ws;
  for (int p = 0; p < 4; ++p) ws.push_back(worker({"owners", server.url(), "owners:" + std::to_string(p), "25000"}));
  std::unordered_set<std::string> seen;
  std::size_t total = 0;
  for (auto& w : ws) {
    for (auto& l : w->lines_until_eof(120s)) {
      REQUIRE(l.size() == 15);  // 72 random bits per thread and a counter, not a thread id
      seen.insert(l);
      ++total;
    }
    CHECK(w->wait() == 0);
  }
  CHECK(total == 100000);
  CHECK(seen.size() == 100000);
}
