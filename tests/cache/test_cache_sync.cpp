// [[cache]] with sync=true (one load per deployment) and refresh_after (an
// aged value is returned at once and reloaded once per deployment), on every
// store (docs/cache.md). On mem:// the other "process" is a caller of the
// shared table itself; on the Redis stores, real cache_worker processes
// (fork/exec) on the suite's store. No timed assertion: a bounded wait, then
// the behaviour.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache_methods.h"
#include "cache_suite.h"
#include "weave/cache.h"
#include "weave/key.h"
#include "cache/cache_runtime.h"
#include "cache/remote_tier.h"
#include <signal.h>

#include "cache_processes.h"

namespace {

// Long enough for a value to age past refresh_after.
const auto k_aged = std::chrono::milliseconds(cache_test::k_refresh_after_ms) + 300ms;

}  // namespace

// A Catalog whose second load (the reload) waits at a gate.
struct HeldReload {
  std::atomic<int> cents{100}, calls{0};
  std::promise<void> reloading, release;
  std::shared_future<void> gate = release.get_future().share();
  bool released = false;
  std::function<Found(const std::string&)> body() {
    return [this](const std::string& id) -> Found {
      if (calls.fetch_add(1) == 1) {
        reloading.set_value();
        gate.wait();
      }
      return shop::Product{id, cents.load()};
    };
  }
  void open() {
    if (!released) release.set_value();
    released = true;
  }
  ~HeldReload() { open(); }
};
// Opens the gate at scope exit; declared after the futures that wait for the
// held reload, so that a failed REQUIRE fails the case instead of hanging it.
struct Opener {
  HeldReload& held;
  ~Opener() { held.open(); }
};

// "k" read once through `how` (100), aged past refresh_after, and 200 in the
// database: the next read claims the reload, which waits at the gate.
struct Aged {
  Find how;
  std::string name;
  HeldReload held;
  std::unique_ptr<Catalog> c = std::make_unique<Catalog>();
  Aged(const std::string& what, Find f) : how(f), name(fresh_name(what)) {
    use_store();
    c->body = held.body();
    REQUIRE(find() == 100);
    std::this_thread::sleep_for(k_aged);
    held.cents = 200;
  }
  ~Aged() { held.open(); }  // before the catalog's destructor waits for the held reload
  int find() { return c->find(name, "k", how)->cents; }
  // While the reload is held, every other caller gets the aged value at once.
  void others_get_the_aged_value() {
    REQUIRE(held.reloading.get_future().wait_for(20s) == std::future_status::ready);
    for (int i = 0; i < 4; ++i) {
      auto other = std::async(std::launch::async, [&] { return find(); });
      REQUIRE(other.wait_for(20s) == std::future_status::ready);
      REQUIRE(other.get() == 100);
    }
  }
  void reloaded_once() {
    REQUIRE(c->finds == 2);
    const weave::CacheStats s = weave::cache_stats(name);
    REQUIRE(s.refreshes == 1);
    REQUIRE(s.loads == 2);
  }
};

TEST_CASE("cache refresh_after: an aged value goes at once to every caller, also the one that claimed the "
          "reload, which runs in the background") {
  Aged t("refresh", Find::refresh);
  // The claimer: the aged value at once, while its reload waits at the gate.
  auto claimer = std::async(std::launch::async, [&] { return t.find(); });
  REQUIRE(claimer.wait_for(20s) == std::future_status::ready);
  REQUIRE(claimer.get() == 100);
  t.others_get_the_aged_value();
  REQUIRE(t.c->finds == 2);  // one reload, held
  t.held.open();
  REQUIRE(cache_test::eventually([&] { return t.find() == 200; }));
  t.reloaded_once();
}

TEST_CASE("cache refresh_after: a call that cannot be copied returns the aged value at once and drops its claim, "
          "so the next caller reloads") {
  Aged t("refresh-uncopied", Find::refresh_uncopied);
  Opener opener{t.held};
  // Never a reload on the caller's thread (it would wait at the gate).
  auto uncopied = std::async(std::launch::async, [&] { return t.find(); });
  REQUIRE(uncopied.wait_for(20s) == std::future_status::ready);
  REQUIRE(uncopied.get() == 100);
  REQUIRE(t.c->finds == 1);
  REQUIRE(weave::cache_stats(t.name).refreshes == 0);
  // The claim was dropped: the next caller that can copy its call claims the reload.
  t.how = Find::refresh;
  auto claimer = std::async(std::launch::async, [&] { return t.find(); });
  REQUIRE(claimer.wait_for(20s) == std::future_status::ready);
  REQUIRE(claimer.get() == 100);
  t.others_get_the_aged_value();
  t.held.open();
  REQUIRE(cache_test::eventually([&] { return t.find() == 200; }));
  t.reloaded_once();
}

TEST_CASE("cache refresh_after: a woven object destroyed while its background reload is held waits for the "
          "reload to end") {
  Aged t("refresh-destroyed", Find::refresh);
  std::atomic<bool> reload_ended{false}, ended_before_destroyed{false};
  t.c->body = [&, body = t.held.body()](const std::string& id) {
    Found f = body(id);
    if (t.held.calls > 1) reload_ended = true;
    return f;
  };
  REQUIRE(t.find() == 100);
  REQUIRE(t.held.reloading.get_future().wait_for(20s) == std::future_status::ready);
  auto destroyer = std::async(std::launch::async, [&] {
    t.c.reset();
    ended_before_destroyed = reload_ended.load();
  });
  Opener opener{t.held};
  REQUIRE(destroyer.wait_for(200ms) == std::future_status::timeout);  // waits for the held reload
  t.held.open();
  REQUIRE(destroyer.wait_for(20s) == std::future_status::ready);
  destroyer.get();
  REQUIRE(ended_before_destroyed);
  // The reload filled the shared tier: a new object reads the new value without loading.
  Catalog again;
  REQUIRE(cache_test::eventually([&] { return again.find(t.name, "k", Find::refresh)->cents == 200; }));
  REQUIRE(again.finds == 0);
  REQUIRE(weave::cache_stats(t.name).refreshes == 1);
}

TEST_CASE("cache refresh_after: a reload that throws leaves the aged value, and its claim until the lease ends") {
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
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);  // the aged value; the reload throws
  REQUIRE(cache_test::eventually([&] { return weave::cache_stats(name).load_failures == 1; }));
  // The failed reload keeps its claim for fill_lease: no caller reloads meanwhile.
  REQUIRE(c.find(name, "k", Find::refresh)->cents == 100);
  REQUIRE(c.finds == 2);
  const weave::CacheStats s = weave::cache_stats(name);
  REQUIRE(s.load_failures == 1);
  REQUIRE(s.refreshes == 0);
}

// A loader whose claim's answer never came sends it again: it holds the
// lease, no one else does.
TEST_CASE("cache sync: a fill or refresh claim sent again by its own caller is answered as the first was") {
  use_store();
  const auto name = fresh_name("claim-again");
  weave::detail::RemoteTier* store = &weave::detail::cache_runtime()->remote();
  const auto read = store->get(name, "k");
  using weave::detail::FillClaim;
  CHECK(store->try_claim_fill(name, "k", "mine", 60s, read.version).claim == FillClaim::load);
  CHECK(store->try_claim_fill(name, "k", "mine", 60s, read.version).claim == FillClaim::load);
  CHECK(store->try_claim_fill(name, "k", "theirs", 60s, read.version).claim == FillClaim::held);
  store->release(name, "k", "mine");
  CHECK(store->try_claim_fill(name, "k", "theirs", 60s, read.version).claim == FillClaim::load);
  store->release(name, "k", "theirs");

  REQUIRE(store->fill(name, "k", R"({"id":"k","cents":1})", 60s, read.version, ""));
  const auto filled = store->get(name, "k");
  CHECK(store->claim_refresh(name, "k", filled, "mine", 60s));
  CHECK(store->claim_refresh(name, "k", filled, "mine", 60s));
  CHECK_FALSE(store->claim_refresh(name, "k", filled, "theirs", 60s));
  store->release(name, "k", "mine");
}


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
    REQUIRE(other->try_claim_fill(name, "k", "other", lease, read.version).claim == weave::detail::FillClaim::load);
    waiter = std::async(std::launch::async, [this] { return c.find(name, "k", Find::sync); });
    REQUIRE(waiter.wait_for(100ms) == std::future_status::timeout);
  }
};

TEST_CASE("cache sync: a miss waits for the caller holding the fill lease and takes its value", "[mem]") {
  WaitingOnOther t("wait", 60s);
  REQUIRE(t.other->fill(t.name, "k", R"({"id":"k","cents":7})", 60s, t.read.version, "other"));
  REQUIRE(t.waiter.wait_for(20s) == std::future_status::ready);  // woken by the fill, not the 60 s lease
  REQUIRE(t.waiter.get()->cents == 7);
  REQUIRE(t.c.finds == 0);
  const weave::CacheStats s = weave::cache_stats(t.name);
  REQUIRE(s.sync_waits == 1);
  REQUIRE(s.remote_hits == 1);
}

TEST_CASE("cache sync: when the lease holder gives up (its method threw) a waiter loads at once", "[mem]") {
  WaitingOnOther t("gives-up", 60s);
  t.other->release(t.name, "k", "other");
  REQUIRE(t.waiter.wait_for(20s) == std::future_status::ready);  // not after the 60 s lease
  REQUIRE(t.waiter.get()->cents == 100);
  REQUIRE(t.c.finds == 1);
  REQUIRE(weave::cache_stats(t.name).sync_waits == 1);
}

TEST_CASE("cache sync: a load slower than fill_lease keeps its lease: no other process claims the key meanwhile", "[mem]") {
  const std::string name = fresh_name("slow-load");
  weave::configure_cache({.url = test_store_url(), .fill_lease = 300ms, .feed_lag = 5s});  // renewed every 100 ms
  Catalog c;
  std::promise<void> entered, open;
  std::shared_future<void> opened = open.get_future().share();
  c.body = [&](const std::string& id) -> Found {
    entered.set_value();
    opened.wait();
    return shop::Product{id, 100};
  };
  auto loader = std::async(std::launch::async, [&] { return c.find(name, "k", Find::sync); });
  struct Opener {
    std::promise<void>& open;
    ~Opener() { open.set_value(); }
  } opener{open};
  entered.get_future().wait();
  std::this_thread::sleep_for(1500ms);  // five leases long
  auto other = other_process();
  const auto read = other->get(name, "k");
  // Still held: the other process would wait instead of loading.
  CHECK(other->try_claim_fill(name, "k", "other", 60s, read.version).claim == weave::detail::FillClaim::held);
}

TEST_CASE("cache sync: a lease holder that never comes back blocks a waiter only until its lease runs out", "[mem]") {
  WaitingOnOther t("crashed", 1s);
  REQUIRE(t.waiter.wait_for(20s) == std::future_status::ready);  // fill_guard, the other bound, is 60 s
  REQUIRE(t.waiter.get()->cents == 100);
  REQUIRE(t.c.finds == 1);
  REQUIRE(weave::cache_stats(t.name).sync_waits == 1);
}

TEST_CASE("cache refresh_after: while another process holds the reload, an aged hit returns at once and "
          "runs nothing", "[mem]") {
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


using cache_test::TempDir;
using cache_test::Worker;
using cache_test::eventually;

namespace {

std::string entry_key(const std::string& name, const std::string& key) {
  std::string entry = "{weave:cache:";
  weave::append_percent_encoded(entry, name, "%:{}");  // the name's ':' encoded (docs/cache.md)
  return entry + ":" + key + "}";
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

TEST_CASE("cache sync across processes: B's miss waits for A's load, is woken by its fill and takes its value", "[redis]") {
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

TEST_CASE("cache sync across processes: when the loader's method throws a waiter loads at once", "[redis]") {
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

TEST_CASE("cache sync across processes: a load slower than fill_lease keeps its lease: the waiter never loads too", "[redis]") {
  BWaitsOnA t("slow-load", 300);  // renewed every 100 ms while A's body is held
  std::this_thread::sleep_for(1500ms);  // five leases long
  CHECK(t.db.loads("k") == 1);          // B is still waiting, it has not loaded
  CHECK(has_waiter(t.name, "k"));
  t.db.open("k");
  REQUIRE(Worker::cents(t.a->answer("sfind")) == 100);
  REQUIRE(Worker::cents(t.b->answer("sfind", 20s)) == 100);
  REQUIRE(t.db.loads("k") == 1);
  CHECK(t.b->stats(t.name)["loads"] == 0);
  REQUIRE_FALSE(read_raw(entry_key(t.name, "k") + "fill"));  // the fill dropped the lease
}

TEST_CASE("cache sync across processes: a SIGKILLed loader blocks the waiter only until its fill lease runs out", "[redis]") {
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

TEST_CASE("cache sync across processes: 3 processes x 4 threads missing one key run the method once", "[redis]") {
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

TEST_CASE("cache refresh_after across processes: an aged value is returned at once by all 3 processes, "
          "reloaded exactly once in the background, and read new afterwards", "[redis]") {
  TempDir db;
  db.write("k", 100);
  const auto name = fresh_name("refresh");
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(std::make_unique<Worker>(test_store_url(), db));
  REQUIRE(Worker::cents(workers[0]->ask("rfind " + name + " k")) == 100);
  std::this_thread::sleep_for(k_aged);
  db.write("k", 200);
  for (auto& w : workers) REQUIRE(w->ask("hold on") == "ok");
  // Every process answers the aged value, the one that claimed the reload too,
  // while that reload is held in its background thread.
  for (auto& w : workers) REQUIRE(Worker::cents(w->ask("rfind " + name + " k")) == 100);
  REQUIRE(cache_test::eventually([&] { return db.loads("k") == 2; }));
  db.open("k");
  for (auto& w : workers)
    REQUIRE(cache_test::eventually([&] { return Worker::cents(w->ask("rfind " + name + " k")) == 200; }));
  REQUIRE(db.loads("k") == 2);
  std::uint64_t refreshes = 0;
  for (auto& w : workers) refreshes += w->stats(name)["refreshes"];
  REQUIRE(refreshes == 1);
  REQUIRE_FALSE(read_raw(entry_key(name, "k") + "refresh"));  // the reload's fill dropped its claim
}

