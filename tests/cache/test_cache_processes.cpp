// [[cache]] across real processes (cache_worker, fork/exec) on a real
// redis-server: invalidation between processes, a killed Pub/Sub connection,
// Redis stopped and restarted, a SIGSTOPped reader, and the staleness oracle
// (staleness_oracle.h) under all of them at once. Each case starts its own
// redis-server. No timed assertions: a bounded poll, then the behaviour.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache_processes.h"
#include "fault_proxy.h"
#include "redis_server.h"
#include "staleness_oracle.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cache_test::eventually;
using cache_test::Stats;
using cache_test::TempDir;
using cache_test::Worker;
using redis_test::Child;
using redis_test::RedisServer;

namespace {

long long kill_clients(RedisServer& server, const std::string& type) {
  return server.client().cmd({"CLIENT", "KILL", "TYPE", type}).integer;
}

// A has k in its local tier: loaded once, then a local hit (per its stats).
void load_locally(Worker& a, const std::string& name, const std::string& key, int expect) {
  const auto before = a.stats(name)["local_hits"];
  REQUIRE(eventually([&] {
    REQUIRE(a.find(name, key) == expect);
    return a.stats(name)["local_hits"] > before;
  }));
}

}  // namespace

TEST_CASE("cache mp: once B's save returned, A stops serving its local copy within a bounded poll",
          "[cache][redis][multiprocess]") {
  RedisServer server;
  TempDir db;
  db.write("k", 100);
  Worker a(server.url(), db), b(server.url(), db);
  REQUIRE(a.find("p", "k") == 100);
  REQUIRE(a.find("p", "k") == 100);
  Stats s = a.stats("p");
  REQUIRE(s["loads"] == 1);
  REQUIRE(s["local_hits"] == 1);

  b.save("p", "k", 200);
  REQUIRE(b.find("p", "k") == 200);  // the writer's own process at once
  int polls = 0;
  REQUIRE(eventually([&] {
    ++polls;
    return a.find("p", "k") == 200;
  }));
  for (int i = 0; i < 20; ++i) REQUIRE(a.find("p", "k") == 200);  // and never the old value again
  // (A may have read the new value before the invalidation came: a local
  // tier is bypassed while the feed is not confirmed within D.)
  CHECK(eventually([&] { return a.stats("p")["invalidations_received"] >= 1; }));
  s = a.stats("p");
  CHECK(s["loads"] == 1);  // the new value came from the shared tier, not the database
  CHECK(b.stats("p")["invalidations_sent"] == 1);
  UNSCOPED_INFO("A read the new value on poll " << polls);
}

// A reader A holding "k" of cache "p" (100) in its local tier, and a
// writer B whose requests go through a fault proxy.
struct ReaderAndWriterBehindProxy {
  RedisServer server;
  fault_test::FaultProxy proxy{server.port()};
  TempDir db;
  Worker a{server.url(), db}, b{proxy.url(), db};
  ReaderAndWriterBehindProxy() {
    db.write("k", 100);
    load_locally(a, "p", "k", 100);
  }
};

// A write and its invalidation are one step (the script publishes it): a
// writer whose reply never arrives, or that dies before reading it, has
// already told every other process. Before, the PUBLISH followed the script
// and A served the old value for its local_ttl (5 minutes here).
TEST_CASE("cache mp: B's write answered after its command timeout has still invalidated A's local copy",
          "[cache][redis][multiprocess]") {
  ReaderAndWriterBehindProxy w;
  Worker &a = w.a, &b = w.b;
  w.proxy.delay_reply(fault_test::Match("", "p:k}"), 2500ms);  // longer than B's 1 s command timeout
  b.ask("save p k 200");  // B's put fails with TimeoutError (the cache fails open); Redis ran it
  CHECK(b.stats("p")["errors"] == 1);
  // A heard of the write (a read that bypassed a lagging feed would not show here).
  REQUIRE(eventually([&] { return a.stats("p")["invalidations_received"] == 1; }));
  REQUIRE(eventually([&] { return a.find("p", "k") == 200; }));
  for (int i = 0; i < 10; ++i) REQUIRE(a.find("p", "k") == 200);
}

TEST_CASE("cache mp: B SIGKILLed after Redis ran its eviction, before reading the reply: A's local copy is gone",
          "[cache][redis][multiprocess]") {
  ReaderAndWriterBehindProxy w;
  Worker &a = w.a, &b = w.b;
  RedisServer& server = w.server;
  w.proxy.delay_reply(fault_test::Match("", "p:k}"), 60s);
  b.child().send("remove p k");  // deletes the database's row, then evicts
  // Redis ran the eviction: the entry is a tombstone ("<version>:").
  REQUIRE(eventually([&] {
    const auto keys = server.client().cmd({"KEYS", "*p:k}"});
    if (keys.elements.size() != 1) return false;
    const auto entry = server.client().cmd({"GET", keys.elements[0].str});
    return !entry.str.empty() && entry.str.back() == ':';
  }));
  b.child().signal(SIGKILL);
  b.child().wait();
  REQUIRE(eventually([&] { return a.stats("p")["invalidations_received"] == 1; }));
  REQUIRE(eventually([&] { return a.find("p", "k") == -1; }));
  for (int i = 0; i < 10; ++i) REQUIRE(a.find("p", "k") == -1);
}

// The bound is D (feed_lag, 10 ms): A may not yet have read the closed
// connection when B's write returns, and its last PING confirmation is then
// still younger than feed_lag. A read that starts D after the write must
// bypass the copy.
TEST_CASE("cache mp: CLIENT KILL TYPE pubsub between A's load and B's write: A returns no old value D after "
          "the write, and its local tier comes back once the feed is subscribed again",
          "[cache][redis][multiprocess]") {
  RedisServer server;
  TempDir db;
  db.write("k", 100);
  Worker a(server.url(), db), b(server.url(), db);
  for (int round = 1; round <= 5; ++round) {
    const int old_value = 100 * round, new_value = 100 * (round + 1);
    load_locally(a, "p", "k", old_value);
    REQUIRE(kill_clients(server, "pubsub") >= 1);
    b.save("p", "k", new_value);
    std::this_thread::sleep_for(10ms);  // D
    const auto hits = a.stats("p")["local_hits"];
    // From here on only the new value; poll until A serves it from its local tier again.
    int reads = 0;
    REQUIRE(eventually([&] {
      ++reads;
      REQUIRE(a.find("p", "k") == new_value);
      return a.stats("p")["local_hits"] > hits;
    }));
    for (int i = 0; i < 10; ++i) REQUIRE(a.find("p", "k") == new_value);
    INFO("round " << round << ": local hits again after " << reads << " reads");
  }
}

TEST_CASE("cache mp: redis-server stopped while A holds a local copy: calls fail open and bypass the local "
          "tier - after a restart on the same port A converges to the database",
          "[cache][redis][multiprocess]") {
  RedisServer server;
  TempDir db;
  db.write("k", 100);
  Worker a(server.url(), db), b(server.url(), db);
  load_locally(a, "p", "k", 100);
  server.stop();

  // Once A noticed (a read went to the store and failed), the local tier is not served.
  const auto errors_before = a.stats("p")["errors"];
  REQUIRE(eventually([&] {
    REQUIRE(a.find("p", "k") == 100);
    return a.stats("p")["errors"] > errors_before;
  }));
  Stats down = a.stats("p");
  for (int i = 0; i < 10; ++i) REQUIRE(a.find("p", "k") == 100);  // the database's value, by running the method
  Stats later = a.stats("p");
  CHECK(later["local_hits"] == down["local_hits"]);
  CHECK(later["loads"] >= down["loads"] + 10);
  CHECK(later["errors"] > down["errors"]);

  // Writes fail open too: the database changes, the error is counted.
  const auto b_errors = b.stats("p")["errors"];
  b.save("p", "k", 300);
  CHECK(b.stats("p")["errors"] > b_errors);
  REQUIRE(db.read("k") == 300);
  REQUIRE(a.find("p", "k") == 300);
  REQUIRE(b.find("p", "k") == 300);

  REQUIRE(server.start());  // same port, empty (no persistence)
  const auto hits = a.stats("p")["local_hits"];
  REQUIRE(eventually([&] {
    REQUIRE(a.find("p", "k") == 300);
    return a.stats("p")["local_hits"] > hits;
  }));
  b.save("p", "k", 400);
  REQUIRE(eventually([&] { return a.find("p", "k") == 400; }));
  for (int i = 0; i < 10; ++i) REQUIRE(a.find("p", "k") == 400);
}

// A load that read the database before a write it cannot know of: the store
// restarted empty meanwhile and the write's cache_put failed (failed open).
// Its fill goes to the restarted store, which holds the key at version 0
// again, as it did at the miss: the fill must be refused all the same, or
// every process would read the older value until its ttl.
TEST_CASE("cache mp: a load that read the database before a restart and a write whose put failed does not fill "
          "the restarted store with its older value",
          "[cache][redis][multiprocess]") {
  RedisServer server;
  TempDir db;
  db.write("k", 100);
  Worker a(server.url(), db), b(server.url(), db);
  REQUIRE(a.ask("slow 4000") == "ok");
  const auto a_errors = a.stats("p")["errors"];
  a.child().send("find p k");  // a miss: reads 100, then answers 4 s later (the server is back by then)
  REQUIRE(eventually([&] { return db.loads("k") == 1; }));
  std::this_thread::sleep_for(100ms);  // the body has read its file (if not, it reads 200: no false failure)
  server.stop();
  const auto b_errors = b.stats("p")["errors"];
  b.save("p", "k", 200);  // the database changes; the put fails open
  REQUIRE(b.stats("p")["errors"] > b_errors);
  REQUIRE(server.start());  // same port, empty
  CHECK(Worker::cents(a.answer("find p k")) == 100);  // what the slow load read
  CHECK(a.stats("p")["errors"] == a_errors);  // its fill reached the restarted store
  REQUIRE(a.ask("slow 0") == "ok");
  Worker c(server.url(), db);
  CHECK(c.find("p", "k") == 200);
  CHECK(b.find("p", "k") == 200);
  CHECK(a.find("p", "k") == 200);
}

// A frozen server answers no confirmation, so A cannot know that no write
// happened (a server may acknowledge a PUBLISH to its writer before it has
// written the message to A): its feed stops counting as live within feed_lag.
TEST_CASE("cache mp: redis-server SIGSTOPped while A holds a local copy: A stops serving it and fails open, "
          "and serves it locally again after SIGCONT",
          "[cache][redis][multiprocess]") {
  RedisServer server;
  TempDir db;
  db.write("k", 100);
  Worker a(server.url(), db);
  load_locally(a, "p", "k", 100);
  const Stats before = a.stats("p");
  ::kill(server.pid(), SIGSTOP);
  std::this_thread::sleep_for(100ms);  // 10x A's feed_lag (10 ms)
  for (int i = 0; i < 2; ++i) CHECK(a.find("p", "k") == 100);  // the method ran: each read timed out (1 s)
  const Stats frozen = a.stats("p");
  ::kill(server.pid(), SIGCONT);
  CHECK(frozen.at("local_hits") == before.at("local_hits"));
  CHECK(frozen.at("loads") >= before.at("loads") + 2);
  CHECK(frozen.at("errors") > before.at("errors"));
  load_locally(a, "p", "k", 100);
}

// After SIGCONT the reader's main thread and its subscriber thread become
// runnable together: the find must not serve the local copy before the
// subscriber has read the invalidations waiting in its socket (CacheOptions::
// feed_lag: the feed counts as live only while its reader drained recently).
TEST_CASE("cache mp: a SIGSTOPped reader resumed after writes returns no value older than the last write "
          "completed before its read began",
          "[cache][redis][multiprocess]") {
  RedisServer server;
  TempDir db;
  db.write("k", 0);
  Worker a(server.url(), db), b(server.url(), db);
  int value = 0;
  for (int round = 1; round <= 20; ++round) {
    load_locally(a, "p", "k", value);
    a.child().signal(SIGSTOP);
    for (int w = 0; w < 3; ++w) b.save("p", "k", ++value);
    // The read is queued while A is frozen: it begins when A resumes, with the
    // invalidations still in its subscription socket.
    a.child().send("find p k");
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 10 * (round % 5)));
    a.child().signal(SIGCONT);
    INFO("round " << round << ": B's last completed write was " << value);
    REQUIRE(Worker::cents(a.answer("find p k")) == value);
  }
}

// The stamp is taken while the feed is down; the feed coming back up drops
// the local tiers before it counts as live, so the install is refused.
TEST_CASE("cache mp: a load that spans an outage of the invalidation feed does not install its older value "
          "in the local tier",
          "[cache][redis][multiprocess]") {
  // A's feed is held down (the default user may not SUBSCRIBE) while A loads
  // the key from a slow database; B writes meanwhile (its invalidation cannot
  // reach A); the feed comes back before A's load returns.
  RedisServer server;
  TempDir db;
  db.write("k", 100);
  Worker a(server.url(), db), b(server.url(), db);
  auto admin = server.client();
  load_locally(a, "p", "k", 100);
  REQUIRE(a.ask("remove p k") == "ok");  // a miss in both tiers from here: the next find loads
  db.write("k", 100);
  admin.cmd({"ACL", "SETUSER", "default", "-subscribe"});
  REQUIRE(kill_clients(server, "pubsub") >= 1);
  REQUIRE(a.ask("slow 3000") == "ok");
  std::this_thread::sleep_for(100ms);  // A noticed the drop; its re-subscriptions are refused
  a.child().send("find p k");          // reads 100 from the database, answers 3 s later
  std::this_thread::sleep_for(200ms);
  b.save("p", "k", 200);
  admin.cmd({"ACL", "SETUSER", "default", "+subscribe"});
  // A's keeper subscribes again within its backoff (at most 1 s), before the load returns.
  REQUIRE(Worker::cents(a.answer("find p k")) == 100);  // what it loaded (before B's write): fine
  REQUIRE(a.ask("slow 0") == "ok");
  REQUIRE(db.read("k") == 200);
  // B's save returned long ago; A's feed is live again. A must not keep 100.
  std::this_thread::sleep_for(100ms);
  const Stats s = a.stats("p");
  INFO("A: local_hits=" << s.at("local_hits") << " refused_stale=" << s.at("refused_stale"));
  for (int i = 0; i < 5; ++i) CHECK(a.find("p", "k") == 200);
}

// ---- the staleness oracle ----

TEST_CASE("staleness oracle: the checker finds a stale read and measures it", "[cache][oracle-checker]") {
  using cache_oracle::Op;
  std::vector<Op> ops = {
      {'W', "k0", 1, 100, 200, 1},
      {'W', "k0", 2, 300, 400, 1},
      {'R', "k0", 0, 150, 160, 2},   // before write 1 completed: fine
      {'R', "k0", 0, 250, 260, 2},   // write 1 completed at 200: stale by 50
      {'R', "k0", 1, 1400, 1410, 3}, // write 2 completed at 400: stale by 1000
      {'R', "k0", 2, 500, 510, 2},   // fresh
      {'R', "k0", 3, 500, 510, 2},   // never written: impossible
      {'R', "k1", 0, 900, 910, 2},   // never written to: fresh
  };
  const auto rep = cache_oracle::check(ops, 100);
  REQUIRE(rep.reads == 6);
  REQUIRE(rep.writes == 2);
  REQUIRE(rep.stale.size() == 2);
  REQUIRE(rep.stale[0].stale_ns == 50);
  REQUIRE(rep.stale[1].stale_ns == 1000);
  REQUIRE(rep.stale[1].latest == 2);
  REQUIRE(rep.stale_beyond(100) == 1);
  REQUIRE(rep.longest_ns() == 1000);
  REQUIRE(rep.stale_after_quiesce == 1);  // began at 1400 > 400 + 100
  REQUIRE(rep.impossible.size() == 1);
  REQUIRE(rep.text().find("stale by more than D: 1") != std::string::npos);
}

namespace {

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::stol(v) : fallback;
}

// test_cache_oracle_soak (label soak) runs the [oracle] cases of this
// executable with WEAVE_CACHE_ORACLE_SECONDS=300.
constexpr long kDefaultOracleSeconds = 5;

// D, the invalidation delay docs/cache.md documents: the workers' feed_lag,
// 10 ms. It bounds staleness by construction (a local hit needs a feed
// confirmation younger than feed_lag), whatever the load, so the assertion
// is D itself (WEAVE_CACHE_ORACLE_BOUND_MS overrides it).
void run_oracle(bool stop_reader) {
  const long seconds = env_long("WEAVE_CACHE_ORACLE_SECONDS", kDefaultOracleSeconds);
  const std::int64_t d_ns = 10'000'000, bound_ns = env_long("WEAVE_CACHE_ORACLE_BOUND_MS", 10) * 1'000'000;
  const long run_ms = seconds * 1000, quiet_ms = 1500;
  constexpr int kKeys = 8, kWriters = 3;
  RedisServer server;
  TempDir db;
  for (int k = 0; k < kKeys; ++k) db.write("k" + std::to_string(k), 0);

  // w0 only reads (the one SIGSTOPped); w1..w3 each write their own keys and read all.
  std::vector<std::unique_ptr<Worker>> ws;
  for (int p = 0; p <= kWriters; ++p) ws.push_back(std::make_unique<Worker>(server.url(), db));
  // The run's seed is printed; WEAVE_CACHE_ORACLE_SEED runs the same faults
  // at the same moments again (the threads' timing is the machine's).
  std::random_device rd;
  const auto seed = static_cast<unsigned>(env_long("WEAVE_CACHE_ORACLE_SEED", rd()));
  for (int p = 0; p <= kWriters; ++p)
    ws[p]->child().send("oracle o " + std::to_string(kKeys) + " " + std::to_string(p - 1) + " " +
                        std::to_string(kWriters) + " " + std::to_string(run_ms) + " " + std::to_string(quiet_ms) +
                        " " + std::to_string(p == 0 ? 0 : 20) + " " + std::to_string(seed + p) + " " + db.path() +
                        "/log" + std::to_string(p));

  // The nemesis: CLIENT KILL (Pub/Sub or command connections) every 100-400 ms,
  // a restart of redis-server, a SIGSTOP of the reader (200-500 ms); for long
  // runs, a restart every 60 s and a SIGSTOP every 20 s.
  std::mt19937 rng(seed);
  const auto start = Clock::now(), end = start + std::chrono::milliseconds(run_ms);
  auto at = [&](double fraction) { return start + std::chrono::milliseconds(long(fraction * run_ms)); };
  std::vector<Clock::time_point> restarts, stops;
  if (seconds < 60) {
    restarts.push_back(at(0.4));
    if (stop_reader) stops.push_back(at(0.65));
  } else {
    for (long s = 30; s < seconds; s += 60) restarts.push_back(start + std::chrono::seconds(s));
    if (stop_reader)
      for (long s = 10; s < seconds; s += 20) stops.push_back(start + std::chrono::seconds(s));
  }
  int kills = 0, restarted = 0, stopped = 0;
  auto next_kill = start + std::chrono::milliseconds(100 + rng() % 300);
  while (Clock::now() < end) {
    const auto now = Clock::now();
    if (!restarts.empty() && now >= restarts.front()) {
      restarts.erase(restarts.begin());
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 200));
      REQUIRE(server.start());
      ++restarted;
    } else if (!stops.empty() && now >= stops.front()) {
      stops.erase(stops.begin());
      ws[0]->child().signal(SIGSTOP);
      std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 300));
      ws[0]->child().signal(SIGCONT);
      ++stopped;
    } else if (now >= next_kill) {
      try {
        kill_clients(server, rng() % 2 ? "pubsub" : "normal");
        ++kills;
      } catch (const std::exception&) {
        // the server is restarting: next time
      }
      next_kill = now + std::chrono::milliseconds(100 + rng() % 300);
    } else {
      std::this_thread::sleep_for(5ms);
    }
  }
  std::vector<cache_oracle::Op> ops;
  for (int p = 0; p <= kWriters; ++p) {
    const std::string done = ws[p]->answer("oracle", std::chrono::milliseconds(quiet_ms) + 120s);
    REQUIRE(done.rfind("done", 0) == 0);
    cache_oracle::read_log(db.path() + "/log" + std::to_string(p), p, ops);
  }
  const cache_oracle::Report rep = cache_oracle::check(ops, d_ns);
  std::printf("%s  run %ld s (seed %u): %d CLIENT KILLs, %d restarts, %d SIGSTOPs of the reader\n",
              rep.text().c_str(), seconds, seed, kills, restarted, stopped);
  std::fflush(stdout);
  INFO(rep.text());
  CHECK(rep.writes > 0);
  CHECK(rep.impossible.empty());
  CHECK(rep.stale_after_quiesce == 0);
  CHECK(rep.stale_beyond(bound_ns) == 0);
  // Converged: every worker's last reads match the database.
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "k" + std::to_string(k);
    for (auto& w : ws) CHECK(w->find("o", key) == db.read(key));
  }
}

}  // namespace

TEST_CASE("staleness oracle: 4 processes read and write 8 keys under CLIENT KILL and a Redis restart",
          "[cache][redis][multiprocess][oracle]") {
  run_oracle(false);
}

// With a SIGSTOPped reader too (see "cache mp: a SIGSTOPped reader ..." above).
TEST_CASE("staleness oracle: 4 processes read and write 8 keys under CLIENT KILL and a Redis restart and a "
          "SIGSTOPped reader",
          "[cache][redis][multiprocess][oracle]") {
  run_oracle(true);
}
