// [[cache]], [[cache_put]], [[cache_evict]] behaviour every store passes
// (docs/cache.md). The store is the executable's (weave_add_store_suite):
// test_store_url() from tests/stores/<store>_store.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "cache_methods.h"
#include "cache_suite.h"
#include "tenant_catalog.weave.h"
#include "weave/key.h"
#include "weave/cache.h"
#include "weave/metrics.h"

#include "cache/cache_runtime.h"
#include "cache/remote_tier.h"
#include <map>

#include "cache_processes.h"
#include "event_recorder.h"
#include "store/executor.h"
#include "store/open.h"
#include "weave/event.h"


namespace {

std::string cache_store_url() { return test_store_url(); }

// An entry's Redis key, as docs/cache.md lays it out.
std::string entry_key(const std::string& name, const std::string& key) {
  std::string entry = "{weave:cache:";
  weave::append_percent_encoded(entry, name, "%:{}");  // the name's ':' encoded
  return entry + ":" + key + "}";
}

// Writes a value the way another program (another version) would.
void store_raw_json(const std::string& name, const std::string& key, const std::string& json) {
  if (test_store_is_mem())
    weave::detail::make_mem_remote("store-suite")->put(name, key, json, std::chrono::minutes(1));
  else
    write_raw(entry_key(name, key), "1:" + json);  // "<version>:<json>" (docs/cache.md)
}

}  // namespace

TEST_CASE("cache: a hit runs no method and returns the stored value") {
  use_store();
  const auto name = fresh_name("hit");
  Catalog c;
  REQUIRE(c.find(name, "p1")->cents == 100);
  REQUIRE(c.find(name, "p1")->cents == 100);
  REQUIRE(c.find(name, "p2")->id == "p2");
  REQUIRE(c.finds == 2);
  const weave::CacheStats s = weave::cache_stats(name);
  REQUIRE(s.loads == 2);
  REQUIRE(s.local_hits == 1);
  REQUIRE(s.local_misses == 2);
  REQUIRE(s.remote_misses == 2);
}

TEST_CASE("cache: name=<tenant> gives each tenant a cache of its own") {
  use_store();
  weave::Woven<tenants::Catalog> catalog;
  const std::string acme = fresh_name("acme"), globex = fresh_name("globex");
  CHECK(catalog.find(acme, "1") == acme + "/1");
  CHECK(catalog.find(globex, "1") == globex + "/1");
  CHECK(catalog.find(acme, "1") == acme + "/1");  // a hit of acme's own
  CHECK(catalog.loads == 2);
  catalog.forget(globex);  // evicts globex's cache only
  CHECK(catalog.find(acme, "1") == acme + "/1");
  CHECK(catalog.loads == 2);
  CHECK(catalog.find(globex, "1") == globex + "/1");
  CHECK(catalog.loads == 3);
}

namespace {
// weave_cache_loads_total of one label, from the metrics text (0: none).
double loads_metric(const std::string& label) {
  const std::string text = weave::metrics_text(), head = "weave_cache_loads_total{cache=\"" + label + "\"} ";
  const auto at = text.find(head);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + head.size()));
}
}  // namespace

// A cache per tenant must not keep every tenant ever seen: a rendered name
// nothing holds and no call used since the last sweep is dropped (its local
// copies with it), and its counts stay in its label's metrics.
TEST_CASE("cache: names rendered from name= are dropped once idle, and their counts stay in the label's metrics") {
  use_store();
  weave::Woven<tenants::Catalog> catalog;
  const auto rt = weave::detail::cache_runtime();
  constexpr std::size_t kept = weave::detail::CacheRuntime::kRenderedNamesKept;
  const std::size_t before = rt->name_count();
  const double loads_before = loads_metric("tenant:<tenant>");
  const std::string run = fresh_name("many");
  constexpr int kTenants = 3000;
  std::size_t most = 0;
  for (int i = 0; i < kTenants; ++i) {
    REQUIRE(catalog.find(run + "-" + std::to_string(i), "1") == run + "-" + std::to_string(i) + "/1");
    most = std::max(most, rt->name_count());
  }
  INFO("names held at most: " << most << " (before: " << before << ")");
  CHECK(most <= before + 3 * kept);  // each sweep keeps the names used since the last one
  CHECK(loads_metric("tenant:<tenant>") >= loads_before + kTenants);
  // A dropped tenant's cache is made again on its next call, and serves.
  const std::string first = run + "-0";
  CHECK(catalog.find(first, "1") == first + "/1");
  CHECK(catalog.find(first, "1") == first + "/1");
  std::string rendered = "tenant:";
  weave::append_percent_encoded(rendered, first);  // as the template renders it
  const weave::CacheStats again = weave::cache_stats(rendered);
  INFO("local hits " << again.local_hits << ", misses " << again.local_misses << ", remote hits " << again.remote_hits
                     << ", loads " << again.loads << ", refused " << again.refused_stale);
  CHECK(again.local_hits == 1);
}

// Calls on tenants that come and go, from several threads: a name is never
// dropped under a call that holds it (ASan would see the freed local tier).
TEST_CASE("cache: rendered names dropped while other threads call other tenants never fail a call") {
  use_store();
  weave::Woven<tenants::Catalog> catalog;
  const std::string run = fresh_name("churn");
  std::vector<std::thread> ts;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 1500; ++i) {
        const std::string tenant = run + "-" + std::to_string((i * 7 + t * 13) % 900);
        if (catalog.find(tenant, "k") != tenant + "/k") ++wrong;
      }
    });
  for (auto& th : ts) th.join();
  CHECK(wrong == 0);
}

// A name and a key that concatenate alike ("t:1" + "x", "t" + "1:x") are two
// entries, and an evict-all of one name reaches no name it is a prefix of.
TEST_CASE("cache: names and keys that concatenate alike are kept apart in the shared tier") {
  use_store();
  const std::string t = fresh_name("joined");
  Catalog c;
  REQUIRE(c.find(t + ":1", "x", Find::remote)->id == "x");
  REQUIRE(c.find(t, "1:x", Find::remote)->id == "1:x");
  REQUIRE(c.finds == 2);
  REQUIRE(c.find(t + ":1", "x", Find::remote)->id == "x");  // each its own entry, both hits
  REQUIRE(c.find(t, "1:x", Find::remote)->id == "1:x");
  REQUIRE(c.finds == 2);
  c.clear(t);  // cache t only
  REQUIRE(c.find(t + ":1", "x", Find::remote)->id == "x");
  REQUIRE(c.finds == 2);
  REQUIRE(c.find(t, "1:x", Find::remote)->id == "1:x");
  REQUIRE(c.finds == 3);
}

TEST_CASE("cache: a stored entry whose head does not parse reads as a miss", "[redis]") {
  use_store();
  const auto name = fresh_name("corrupt");
  Catalog c;
  for (const char* head : {"184467440737095516160", "1@99999999999999999999", "x1", "1@-", ""}) {
    INFO(head);
    const std::string key = std::string("k") + std::to_string(c.finds.load());
    write_raw(entry_key(name, key), std::string(head) + R"(:{"id":"forged","cents":5})");
    CHECK(c.find(name, key, Find::remote)->id == key);  // loaded, not the stored text
  }
}

TEST_CASE("cache: the shared tier answers when the local tier is bypassed") {
  use_store();
  const auto name = fresh_name("remote");
  Catalog c;
  c.find(name, "p1", Find::remote);
  REQUIRE(c.find(name, "p1", Find::remote)->id == "p1");
  REQUIRE(c.finds == 1);
  const weave::CacheStats s = weave::cache_stats(name);
  REQUIRE(s.remote_hits == 1);
  REQUIRE(s.local_hits == 0);
}

TEST_CASE("cache: tier=local keeps nothing in the shared tier") {
  use_store();
  const auto name = fresh_name("local");
  Catalog c;
  c.find(name, "p1", Find::local);
  c.find(name, "p1", Find::local);
  REQUIRE(c.finds == 1);
  REQUIRE(c.find(name, "p1", Find::remote)->id == "p1");  // nothing shared: loads
  REQUIRE(c.finds == 2);
}

TEST_CASE("cache_put: the writer's own process serves the new value at once") {
  use_store();
  const auto name = fresh_name("put");
  Catalog c;
  REQUIRE(c.find(name, "p1")->cents == 100);
  c.save(name, shop::Product{"p1", 250});
  REQUIRE(c.find(name, "p1")->cents == 250);
  REQUIRE(c.find(name, "p1", Find::remote)->cents == 250);
  REQUIRE(c.finds == 1);
  REQUIRE(weave::cache_stats(name).invalidations_sent == 1);
}

TEST_CASE("cache_evict: the next read loads again, in both tiers") {
  use_store();
  const auto name = fresh_name("evict");
  Catalog c;
  c.find(name, "p1");
  c.find(name, "p2");
  c.remove(name, "p1");
  c.find(name, "p1");
  c.find(name, "p2");
  REQUIRE(c.finds == 3);
  c.clear(name);  // all=true
  c.find(name, "p1");
  c.find(name, "p2");
  REQUIRE(c.finds == 5);
}

TEST_CASE("cache: concurrent misses of one key run the method once") {
  use_store();
  const auto name = fresh_name("flight");
  Catalog c;
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  c.body = [&](const std::string& id) -> Found {
    gate.wait();
    return shop::Product{id, 7};
  };
  constexpr int kCallers = 8;
  std::vector<std::future<Found>> calls;
  for (int i = 0; i < kCallers; ++i)
    calls.push_back(std::async(std::launch::async, [&] { return c.find(name, "hot"); }));
  // The first caller is in the method; give the others time to reach the flight.
  while (c.finds == 0) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);
  release.set_value();
  for (auto& f : calls) REQUIRE(f.get()->cents == 7);
  REQUIRE(c.finds == 1);
  const weave::CacheStats s = weave::cache_stats(name);
  REQUIRE(s.loads == 1);
  REQUIRE(s.shared_loads + s.local_hits == kCallers - 1);
}

TEST_CASE("cache: when the loader throws, the waiting callers load for themselves") {
  use_store();
  const auto name = fresh_name("flight-fails");
  Catalog c;
  std::atomic<int> calls{0};
  c.body = [&](const std::string& id) -> Found {
    if (calls.fetch_add(1) == 0) {
      std::this_thread::sleep_for(50ms);
      throw std::runtime_error("database down");
    }
    return shop::Product{id, 9};
  };
  auto first = std::async(std::launch::async, [&] { return c.find(name, "k"); });
  while (calls == 0) std::this_thread::sleep_for(1ms);
  auto second = std::async(std::launch::async, [&] { return c.find(name, "k"); });
  REQUIRE_THROWS_WITH(first.get(), "database down");
  REQUIRE(second.get()->cents == 9);
  REQUIRE(weave::cache_stats(name).load_failures == 1);
}

TEST_CASE("cache: empty results are kept for null_ttl, and not at all with 0ms") {
  use_store();
  const auto name = fresh_name("null");
  Catalog c;
  c.body = [](const std::string&) -> Found { return std::nullopt; };
  REQUIRE_FALSE(c.find(name, "gone"));
  REQUIRE_FALSE(c.find(name, "gone"));
  REQUIRE(c.finds == 1);  // default null_ttl: kept
  const auto name0 = fresh_name("null0");
  REQUIRE_FALSE(c.find(name0, "gone", Find::null0));
  REQUIRE_FALSE(c.find(name0, "gone", Find::null0));
  REQUIRE(c.finds == 3);
}

namespace {
// Makes c's loads return version `version`; the first load of version 1
// blocks (a slow database read) until release().
struct HeldLoad {
  std::promise<void> in_method, released;
  std::shared_future<void> gate = released.get_future().share();
  std::atomic<int> version{1};
  explicit HeldLoad(Catalog& c) {
    c.body = [this](const std::string& id) -> Found {
      const int seen = version.load();
      if (seen == 1) {
        in_method.set_value();
        gate.wait();
      }
      return shop::Product{id, seen};
    };
  }
  void wait_until_loading() { in_method.get_future().wait(); }
  void release() { released.set_value(); }
};
}  // namespace

TEST_CASE("cache: a load that started before an evict does not install its older value") {
  use_store();
  const auto name = fresh_name("race");
  Catalog c;
  HeldLoad held(c);
  auto slow = std::async(std::launch::async, [&] { return c.find(name, "k"); });
  held.wait_until_loading();
  held.version = 2;      // the data changes while the slow load holds version 1 ...
  c.remove(name, "k");  // ... and the writer evicts
  held.release();
  REQUIRE(slow.get()->cents == 1);        // the slow caller gets what it loaded
  REQUIRE(c.find(name, "k")->cents == 2);  // but it was not kept in either tier
  REQUIRE(c.find(name, "k", Find::remote)->cents == 2);
  REQUIRE(c.finds == 2);
}

TEST_CASE("cache: a caller that joins a slow load after an evict returned does not get the load's older value") {
  use_store();
  const auto name = fresh_name("join");
  Catalog c;
  HeldLoad held(c);
  auto slow = std::async(std::launch::async, [&] { return c.find(name, "k"); });
  held.wait_until_loading();
  held.version = 2;
  c.remove(name, "k");  // returned: every read that begins from here must see version 2
  auto joined = std::async(std::launch::async, [&] { return c.find(name, "k"); });
  // Let the second caller join the slow load's flight (if it is late, it
  // loads by itself, and the check below holds as well).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  held.release();
  CHECK(slow.get()->cents == 1);    // began before the write: what it loaded is fine
  CHECK(joined.get()->cents == 2);  // began after it: never the slow load's value
  CHECK(c.find(name, "k")->cents == 2);
}

TEST_CASE("cache: a stored value that no longer fits the type is a miss, overwritten and counted") {
  use_store();
  const auto name = fresh_name("shape");
  Catalog c;
  // Another version of the program stored a Product under this key as a plain number.
  store_raw_json(name, "p1", "42");
  REQUIRE(c.find(name, "p1", Find::remote)->cents == 100);
  REQUIRE(c.find(name, "p1", Find::remote)->cents == 100);
  REQUIRE(c.finds == 1);
  REQUIRE(weave::cache_stats(name).decode_failures == 1);
}

TEST_CASE("cache: the local tier holds its byte bound") {
  weave::configure_cache(
      {.url = cache_store_url(), .local_max_entries = 0, .local_max_bytes = 2048, .feed_lag = std::chrono::seconds(5)});
  const auto name = fresh_name("bytes");
  Catalog c;
  for (int i = 0; i < 300; ++i) c.find(name, "key-" + std::to_string(i), Find::local);
  // About 30 bytes of JSON each: 300 of them cannot all stay in 2 KiB.
  REQUIRE(weave::cache_stats(name).evictions > 0);
  use_store();
}

TEST_CASE("cache: without key= every argument is part of the key") {
  use_store();
  const auto name = fresh_name("allargs");
  Catalog c;
  REQUIRE(c.price(name, "a", 1)->cents == 10);
  REQUIRE(c.price(name, "a", 1)->cents == 10);
  REQUIRE(c.price(name, "a", 2)->cents == 20);
  REQUIRE(c.price(name, "b", 1)->cents == 10);
  REQUIRE(c.prices == 3);
}

TEST_CASE("cache: methods of different result types sharing a name never read each other's values as their own") {
  use_store();
  const auto name = fresh_name("types");
  Catalog c;
  c.save(name, shop::Product{"p1", 250});            // cache_put keeps a shop::Product
  REQUIRE(c.find(name, "p1")->cents == 250);         // std::optional<shop::Product>: converted, not reinterpreted
  REQUIRE(c.finds == 0);
  REQUIRE(c.count(name, "p1") == 7);                 // int: the Product does not fit: a miss, the method runs
  REQUIRE(c.counts == 1);
}

// A write's script publishes its own invalidation (docs/cache.md,
// "Invalidations"): under concurrent writers every write is one message, and
// each key reaches the other process.
TEST_CASE("cache_put: 8 concurrent writers publish one invalidation per write, and another process drops every "
          "key", "[redis]") {
  use_store();
  const auto name = fresh_name("batch");
  cache_test::TempDir db;
  cache_test::Worker other(test_store_url(), db);
  Catalog c;
  constexpr int kThreads = 8, kKeysPerThread = 4, kWritesPerThread = 25, kRounds = 3;
  auto key_of = [](int t, int i) { return "k" + std::to_string(t) + "-" + std::to_string(i % kKeysPerThread); };
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kKeysPerThread; ++i) {
      REQUIRE(other.find(name, key_of(t, i)) == -1);  // not in its database: an empty copy, kept
      other.find(name, key_of(t, i));
    }
  std::map<std::string, int> last;
  for (int round = 1; round <= kRounds; ++round) {
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        for (int i = 0; i < kWritesPerThread; ++i) c.save(name, shop::Product{key_of(t, i), round * 1000 + i});
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t)
      for (int i = 0; i < kWritesPerThread; ++i) last[key_of(t, i)] = round * 1000 + i;
  }
  constexpr std::uint64_t writes = kRounds * kThreads * kWritesPerThread;
  const weave::CacheStats s = weave::cache_stats(name);
  CHECK(s.invalidations_sent == writes);
  CHECK(s.invalidation_messages == writes);
  CHECK(s.errors == 0);
  // The writer's process serves the last value at once; the other one has
  // heard of every write (one key each) and drops every copy.
  for (const auto& [key, cents] : last) REQUIRE(c.find(name, key)->cents == cents);
  REQUIRE(cache_test::eventually([&] { return other.stats(name)["invalidations_received"] == writes; }));
  for (const auto& [key, cents] : last) REQUIRE(other.find(name, key) == cents);
}

TEST_CASE("cache events: a dropped invalidation feed is one feed_gap event, and its return a reconnected one", "[redis]") {
  EventRecorder events({weave::EventKind::feed_gap, weave::EventKind::reconnected});
  use_store();
  const auto name = fresh_name("gap");
  Catalog c;
  c.find(name, "k");
  c.find(name, "k");  // a local hit: the feed is live
  weave::store::open_executor(test_admin_url(), {})->for_each_master([](weave::store::NodeExecutor& n) {
    n.command(weave::store::Command{"CLIENT", "KILL", "TYPE", "pubsub"});
  });
  using K = weave::EventKind;
  CHECK(cache_test::eventually(
      [&] { return events.count(K::feed_gap, "cache") == 1 && events.count(K::reconnected, "store") >= 1; }));
  CHECK(events.count(K::feed_gap, "cache") == 1);  // one per outage
}

// The batch format (docs/cache.md, "Invalidations"), as a Weave of the
// version before per-write invalidations sends it.
TEST_CASE("cache: a batched invalidation drops each key it lists and no other, and one that does not parse drops the name", "[redis]") {
  use_store();
  const auto name = fresh_name("wire");
  Catalog c;
  for (const char* k : {"k1", "k2", "k3"}) {
    c.find(name, k);
    c.find(name, k);
  }
  auto publish = [&](const std::string& keys) {
    weave::store::open_executor(test_admin_url(), {})
        ->publish_broadcast("{weave:cache:}invalidations", "other|a|" + std::to_string(name.size()) + "|" + name + keys);
  };
  auto stats = [&] { return weave::cache_stats(name); };
  publish("2:k12:k2");
  REQUIRE(cache_test::eventually([&] { return stats().invalidations_received == 2; }));
  const std::uint64_t hits = stats().local_hits;
  c.find(name, "k3");
  REQUIRE(stats().local_hits == hits + 1);
  c.find(name, "k1");
  c.find(name, "k2");
  REQUIRE(stats().local_hits == hits + 1);  // read again from the shared tier
  REQUIRE(c.finds == 3);
  publish("2:k1x");  // not a list: the whole name
  REQUIRE(cache_test::eventually([&] { return stats().invalidations_received == 3; }));
  c.find(name, "k3");
  REQUIRE(stats().local_hits == hits + 1);
  // A name size over 2^64 (2^64 + the name's size: wrapped, it would read as
  // the name) is not a message; the valid one after it is.
  REQUIRE(name.size() < 300);
  const std::string overflowing = "18446744073709551" + std::to_string(616 + name.size());
  auto exec = weave::store::open_executor(test_admin_url(), {});
  exec->publish_broadcast("{weave:cache:}invalidations", "other|k|" + overflowing + "|" + name + "k3");
  exec->publish_broadcast("{weave:cache:}invalidations", "other|k|" + std::to_string(name.size()) + "|" + name + "k3");
  REQUIRE(cache_test::eventually([&] { return stats().invalidations_received >= 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(stats().invalidations_received == 4);
}
