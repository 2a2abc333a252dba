// [[cache]] with sync=true (one load per deployment) and refresh_after (an
// aged value is returned at once and reloaded once per deployment), on every
// store (docs/cache.md). On mem:// the other "process" is a caller of the
// shared table itself; on the Redis stores, real cache_worker processes
// (fork/exec) on the suite's store. No timed assertion: a bounded wait, then
// the behaviour.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache_methods.h"
#include "cache_suite.h"
#include "weave/cache.h"
#if WEAVE_TEST_STORE_IS_MEM
#include "cache/remote_tier.h"
#else
#include <signal.h>

#include "cache_processes.h"
#endif

namespace {

// Long enough for a value to age past refresh_after.
const auto k_aged = std::chrono::milliseconds(cache_test::k_refresh_after_ms) + 300ms;

}  // namespace

TEST_CASE("cache refresh_after: an aged value goes at once to every caller but the one reloading it, "
          "which returns the new value") {
  use_store();
  const auto name = fresh_name("refresh");
  Catalog c;
  std::atomic<int> cents{100}, calls{0};
  std::promise<void> reloading, release;
  std::shared_future<void> gate = release.get_future().share();
  c.body = [&](const std::string& id) -> Found {
    if (calls.fetch_add(1) == 1) {
      reloading.set_value();
      gate.wait();
    }
    return shop::Product{id, cents.load()};
  };
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);
  std::this_thread::sleep_for(k_aged);
  cents = 200;
  auto refresher = std::async(std::launch::async, [&] { return c.find(name, "k", Find::refresh); });
  REQUIRE(reloading.get_future().wait_for(20s) == std::future_status::ready);
  // The reload is held: every other caller gets the aged value without waiting for it.
  for (int i = 0; i < 4; ++i) {
    auto other = std::async(std::launch::async, [&] { return c.find(name, "k", Find::refresh); });
    const bool at_once = other.wait_for(20s) == std::future_status::ready;
    if (!at_once) release.set_value();  // fail, not hang in the futures' destructors
    REQUIRE(at_once);
    REQUIRE(other.get()->cents == 100);
  }
  release.set_value();
  REQUIRE(refresher.get()->cents == 200);
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 200);
  REQUIRE(c.finds == 2);
  const weave::CacheStats s = weave::cache_stats(name);
  REQUIRE(s.refreshes == 1);
  REQUIRE(s.loads == 2);
}

TEST_CASE("cache refresh_after: a reload that throws returns the aged value and keeps it") {
  use_store();
  const auto name = fresh_name("refresh-fails");
  Catalog c;
  std::atomic<int> calls{0};
  c.body = [&](const std::string& id) -> Found {
    if (calls.fetch_add(1) == 1) throw std::runtime_error("database down");
    return shop::Product{id, 100};
  };
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);
  std::this_thread::sleep_for(k_aged);
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);  // the reload threw: the aged value
  // The failed reload keeps its claim for fill_lease: no caller reloads meanwhile.
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);
  REQUIRE(c.finds == 2);
  const weave::CacheStats s = weave::cache_stats(name);
  REQUIRE(s.load_failures == 1);
  REQUIRE(s.refreshes == 0);
}

#if WEAVE_TEST_STORE_IS_MEM

// The shared table, as another process of the deployment would use it.
std::shared_ptr<weave::detail::RemoteTier> other_process() { return weave::detail::make_mem_remote("store-suite"); }

// A find(sync=true) of "k", started while the other process holds the
// key's fill lease for `lease`, and seen waiting.
struct WaitingOnOther {
  std::string name;
  Catalog c;
  std::shared_ptr<weave::detail::RemoteTier> other = other_process();
  weave::detail::RemoteRead read;
  std::future<Found> waiter;

  WaitingOnOther(const std::string& what, std::chrono::milliseconds lease) : name(fresh_name(what)) {
    use_store();
    read = other->get(name, "k");
    REQUIRE(other->claim_fill(name, "k", "other", lease, read.version, std::chrono::steady_clock::now()) ==
            weave::detail::FillClaim::load);
    waiter = std::async(std::launch::async, [this] { return c.find(name, "k", Find::sync); });
    REQUIRE(waiter.wait_for(100ms) == std::future_status::timeout);
  }
};

TEST_CASE("cache sync: a miss waits for the caller holding the fill lease and takes its value") {
  WaitingOnOther t("wait", 60s);
  REQUIRE(t.other->fill(t.name, "k", R"({"id":"k","cents":7})", 60s, t.read.version, "other"));
  REQUIRE(t.waiter.wait_for(20s) == std::future_status::ready);  // woken by the fill, not the 60 s lease
  REQUIRE(t.waiter.get()->cents == 7);
  REQUIRE(t.c.finds == 0);
  const weave::CacheStats s = weave::cache_stats(t.name);
  REQUIRE(s.sync_waits == 1);
  REQUIRE(s.remote_hits == 1);
}

TEST_CASE("cache sync: when the lease holder gives up (its method threw) a waiter loads at once") {
  WaitingOnOther t("gives-up", 60s);
  t.other->release(t.name, "k", "other");
  REQUIRE(t.waiter.wait_for(20s) == std::future_status::ready);  // not after the 60 s lease
  REQUIRE(t.waiter.get()->cents == 100);
  REQUIRE(t.c.finds == 1);
  REQUIRE(weave::cache_stats(t.name).sync_waits == 1);
}

TEST_CASE("cache sync: a lease holder that never comes back blocks a waiter only until its lease runs out") {
  WaitingOnOther t("crashed", 1s);
  REQUIRE(t.waiter.wait_for(20s) == std::future_status::ready);  // fill_guard, the other bound, is 60 s
  REQUIRE(t.waiter.get()->cents == 100);
  REQUIRE(t.c.finds == 1);
  REQUIRE(weave::cache_stats(t.name).sync_waits == 1);
}

TEST_CASE("cache refresh_after: while another process holds the reload, an aged hit returns at once and "
          "runs nothing") {
  use_store();
  const auto name = fresh_name("refresh-claimed");
  Catalog c;
  auto other = other_process();
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);
  std::this_thread::sleep_for(k_aged);
  const auto aged = other->get(name, "k");
  REQUIRE(other->claim_refresh(name, "k", aged, "other", 60s));
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);
  REQUIRE(c.finds == 1);
  REQUIRE(other->fill(name, "k", R"({"id":"k","cents":300})", 60s, aged.version, "other"));
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 300);  // the other process's reload
  REQUIRE(c.finds == 1);
  REQUIRE(weave::cache_stats(name).refreshes == 0);
}

#else  // Redis stores: real processes

using cache_test::TempDir;
using cache_test::Worker;
using cache_test::eventually;

namespace {

std::string entry_key(const std::string& name, const std::string& key) {
  return "{weave:cache:" + name + ":" + key + "}";
}

// The fill lease of `key` shows a waiter (claim_fill.lua marks it with '+').
bool has_waiter(const std::string& name, const std::string& key) {
  const auto lease = read_raw(entry_key(name, key) + "fill");
  return lease && !lease->empty() && lease->back() == '+';
}

}  // namespace

// Worker A loads "k" with sync=true (its body held until db.open), and
// worker B's miss of it waits on A's fill lease.
struct BWaitsOnA {
  TempDir db;
  std::string name;
  std::unique_ptr<Worker> a, b;

  BWaitsOnA(const std::string& what, long lease_ms, int failures = 0) : name(fresh_name(what)) {
    db.write("k", 100);
    a = std::make_unique<Worker>(test_store_url(), db);
    b = std::make_unique<Worker>(test_store_url(), db);
    REQUIRE(a->ask("lease " + std::to_string(lease_ms)) == "ok");
    REQUIRE(a->ask("hold on") == "ok");
    REQUIRE(a->ask("fail " + std::to_string(failures)) == "ok");
    a->child().send("sfind " + name + " k");
    REQUIRE(eventually([&] { return db.loads("k") == 1; }));
    b->child().send("sfind " + name + " k");
    REQUIRE(eventually([&] { return has_waiter(name, "k"); }));
  }
};

TEST_CASE("cache sync across processes: B's miss waits for A's load, is woken by its fill and takes its value") {
  BWaitsOnA t("once", 60'000);  // a 60 s lease: only a wake lets B go on in time
  t.db.open("k");
  REQUIRE(Worker::cents(t.a->answer("sfind")) == 100);
  REQUIRE(Worker::cents(t.b->answer("sfind", 20s)) == 100);
  REQUIRE(t.db.loads("k") == 1);
  auto s = t.b->stats(t.name);
  CHECK(s["sync_waits"] == 1);
  CHECK(s["loads"] == 0);
  CHECK(s["remote_hits"] == 1);
  REQUIRE_FALSE(read_raw(entry_key(t.name, "k") + "fill"));  // the fill dropped the lease
}

TEST_CASE("cache sync across processes: when the loader's method throws a waiter loads at once") {
  BWaitsOnA t("throws", 60'000, 1);
  t.db.open("k");
  const auto failed = t.a->child().line(20s);
  REQUIRE(failed);
  CHECK(failed->find("database down") != std::string::npos);
  REQUIRE(Worker::cents(t.b->answer("sfind", 20s)) == 100);  // not after A's 60 s lease
  REQUIRE(t.db.loads("k") == 2);
  auto s = t.b->stats(t.name);
  CHECK(s["sync_waits"] == 1);
  CHECK(s["loads"] == 1);
  REQUIRE_FALSE(read_raw(entry_key(t.name, "k") + "fill"));
}

TEST_CASE("cache sync across processes: a SIGKILLed loader blocks the waiter only until its fill lease runs out") {
  BWaitsOnA t("killed", 1000);
  t.a->child().signal(SIGKILL);
  t.a.reset();
  // fill_guard, the bound of the whole wait, is 60 s: an answer within 20 s is the 1 s lease's end.
  REQUIRE(Worker::cents(t.b->answer("sfind", 20s)) == 100);
  REQUIRE(t.db.loads("k") == 2);
  auto s = t.b->stats(t.name);
  CHECK(s["sync_waits"] == 1);
  CHECK(s["loads"] == 1);
}

TEST_CASE("cache sync across processes: 3 processes x 4 threads missing one key run the method once") {
  TempDir db;
  db.write("k", 100);
  const auto name = fresh_name("burst");
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(std::make_unique<Worker>(test_store_url(), db));
    REQUIRE(workers.back()->ask("lease 60000") == "ok");
    REQUIRE(workers.back()->ask("hold on") == "ok");
  }
  for (auto& w : workers) w->child().send("burst sfind " + name + " k 4");
  REQUIRE(eventually([&] { return db.loads("k") == 1; }));
  REQUIRE(eventually([&] { return has_waiter(name, "k"); }));
  std::this_thread::sleep_for(300ms);  // the other processes reach the lease meanwhile (a late one only hits)
  db.open("k");
  for (auto& w : workers) REQUIRE(w->answer("burst") == "values 100 100 100 100");
  REQUIRE(db.loads("k") == 1);
  std::uint64_t waits = 0;
  for (auto& w : workers) waits += w->stats(name)["sync_waits"];
  CHECK(waits >= 1);
  CHECK(waits <= 2);
}

TEST_CASE("cache refresh_after across processes: an aged value is returned at once, reloaded exactly once "
          "for 3 processes, and read new afterwards") {
  TempDir db;
  db.write("k", 100);
  const auto name = fresh_name("refresh");
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(std::make_unique<Worker>(test_store_url(), db));
  REQUIRE(Worker::cents(workers[0]->ask("rfind " + name + " k")) == 100);
  std::this_thread::sleep_for(k_aged);
  db.write("k", 200);
  for (auto& w : workers) REQUIRE(w->ask("hold on") == "ok");
  for (auto& w : workers) w->child().send("rfind " + name + " k");
  // Two answer the aged value while the third one's reload is held.
  std::vector<int> answers(workers.size(), 0);
  int answered = 0;
  REQUIRE(eventually([&] {
    for (std::size_t i = 0; i < workers.size(); ++i)
      if (!answers[i])
        if (auto l = workers[i]->child().line(20ms)) {
          answers[i] = Worker::cents(*l);
          ++answered;
        }
    return answered == 2;
  }));
  for (int v : answers) CHECK((v == 0 || v == 100));
  REQUIRE(db.loads("k") == 2);
  db.open("k");
  for (std::size_t i = 0; i < workers.size(); ++i)
    if (!answers[i]) REQUIRE(Worker::cents(workers[i]->answer("rfind")) == 200);  // the reloader gets the new value
  for (auto& w : workers) REQUIRE(Worker::cents(w->ask("rfind " + name + " k")) == 200);
  REQUIRE(db.loads("k") == 2);
  std::uint64_t refreshes = 0;
  for (auto& w : workers) refreshes += w->stats(name)["refreshes"];
  REQUIRE(refreshes == 1);
  REQUIRE_FALSE(read_raw(entry_key(name, "k") + "refresh"));  // the reload's fill dropped its claim
}

#endif
