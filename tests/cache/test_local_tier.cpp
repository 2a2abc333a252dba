// The local tier of [[cache]] (src/cache/local_tier.h): bounds, expiry,
// invalidation stamps, W-TinyLFU admission, and a concurrent staleness check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/local_tier.h"
#include "weave/error.h"

using weave::detail::jittered;
using weave::detail::LocalEntry;
using weave::detail::LocalTier;
using weave::detail::LocalTierOptions;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

LocalEntry entry_of(long v, std::size_t weight = 1, std::uint64_t version = 0,
                    Clock::time_point expires = Clock::time_point::max()) {
  return LocalEntry{std::make_shared<const long>(v), version, expires, weight};
}

long value_of(const LocalEntry& e) { return *static_cast<const long*>(e.value.get()); }

// A read-through step: a miss is filled, as the interceptor does.
bool get_or_fill(LocalTier& tier, const std::string& key, long v = 0) {
  if (tier.get(key, Clock::now())) return true;
  tier.put(key, entry_of(v), tier.stamp(key));
  return false;
}

// The baseline the admission policy is judged against.
class Lru {
 public:
  explicit Lru(std::size_t capacity) : capacity_(capacity) {}
  bool access(const std::string& key) {
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.end(), order_, it->second);
      return true;
    }
    order_.push_back(key);
    index_[key] = std::prev(order_.end());
    if (order_.size() > capacity_) {
      index_.erase(order_.front());
      order_.pop_front();
    }
    return false;
  }

 private:
  std::size_t capacity_;
  std::list<std::string> order_;
  std::unordered_map<std::string, std::list<std::string>::iterator> index_;
};

}  // namespace

TEST_CASE("local tier: the entry bound holds under random inserts") {
  const unsigned shards = GENERATE(0u, 1u, 4u);
  LocalTier tier(LocalTierOptions{.max_entries = 1000, .shards = shards});
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> key(0, 9999);
  std::size_t most = 0;
  for (int i = 0; i < 30000; ++i) {
    const std::string k = "k" + std::to_string(key(rng));
    if (i % 3 == 0) tier.get(k, Clock::now());
    tier.put(k, entry_of(i), tier.stamp(k));
    if (i % 97 == 0) most = std::max(most, tier.stats().entries);
  }
  const auto s = tier.stats();
  CHECK(s.entries <= 1000);
  CHECK(most <= 1000);
  CHECK(s.entries >= 900);  // bounded, not starved
  CHECK(s.evictions > 0);
}

TEST_CASE("local tier: the byte bound holds under random inserts of random weights") {
  const unsigned shards = GENERATE(0u, 1u);
  LocalTier tier(LocalTierOptions{.max_entries = 0, .max_bytes = 256 * 1024, .shards = shards});
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> key(0, 4999);
  std::uniform_int_distribution<std::size_t> weight(1, 3000);
  std::size_t most = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string k = "k" + std::to_string(key(rng));
    tier.get(k, Clock::now());
    tier.put(k, entry_of(i, weight(rng)), tier.stamp(k));
    if (i % 89 == 0) most = std::max(most, tier.stats().bytes);
  }
  const auto s = tier.stats();
  CHECK(s.bytes <= 256 * 1024);
  CHECK(most <= 256 * 1024);
  CHECK(s.bytes >= 200 * 1024);
  CHECK(s.entries > 50);
}

TEST_CASE("local tier: an update that makes an entry heavier still respects the byte bound") {
  LocalTier tier(LocalTierOptions{.max_entries = 0, .max_bytes = 10'000, .shards = 1});
  for (int i = 0; i < 50; ++i) tier.put("k" + std::to_string(i), entry_of(i, 150), tier.stamp("k" + std::to_string(i)));
  REQUIRE(tier.stats().bytes <= 10'000);
  for (int i = 0; i < 50; ++i) {
    const std::string k = "k" + std::to_string(i);
    tier.put(k, entry_of(i, 900), tier.stamp(k));
    CHECK(tier.stats().bytes <= 10'000);
  }
}

TEST_CASE("local tier: an entry heavier than a shard's byte bound is refused and drops the old copy") {
  LocalTier tier(LocalTierOptions{.max_entries = 0, .max_bytes = 1000, .shards = 1});
  REQUIRE(tier.put("k", entry_of(1, 10), tier.stamp("k")));
  CHECK_FALSE(tier.put("k", entry_of(2, 5000), tier.stamp("k")));
  CHECK_FALSE(tier.get("k", Clock::now()));
  CHECK(tier.stats().rejected_admission == 1);
  CHECK(tier.stats().bytes == 0);
}

TEST_CASE("local tier: a put whose entry loses its admission at once returns false") {
  // Window: 1% of 1000 bytes, so an entry of 100 bytes goes straight to the
  // admission test against the main space (990 bytes).
  LocalTier tier(LocalTierOptions{.max_entries = 0, .max_bytes = 1000, .shards = 1});
  for (int i = 0; i < 9; ++i) {
    const std::string k = "hot" + std::to_string(i);
    for (int r = 0; r < 4; ++r) tier.get(k, Clock::now());
    REQUIRE(tier.put(k, entry_of(i, 100), tier.stamp(k)));
  }
  tier.get("cold", Clock::now());
  CHECK_FALSE(tier.put("cold", entry_of(0, 100), tier.stamp("cold")));
  CHECK_FALSE(tier.get("cold", Clock::now()));
  CHECK(tier.stats().rejected_admission == 1);
  CHECK(tier.stats().entries == 9);
}

TEST_CASE("local tier: both bounds zero is a configuration error") {
  CHECK_THROWS_AS(LocalTier(LocalTierOptions{.max_entries = 0, .max_bytes = 0}), std::invalid_argument);
}

TEST_CASE("local tier: shards are a power of two and never hold less than one entry") {
  CHECK(LocalTier(LocalTierOptions{.max_entries = 3, .shards = 16}).options().shards <= 2);
  CHECK(LocalTier(LocalTierOptions{.max_entries = 100'000, .shards = 5}).options().shards == 8);
  const unsigned automatic = LocalTier(LocalTierOptions{.max_entries = 100'000}).options().shards;
  CHECK(std::has_single_bit(automatic));
  CHECK(automatic <= 64);
  CHECK(LocalTier(LocalTierOptions{.max_entries = 100}).options().shards == 1);  // 64 entries a shard at least
}

TEST_CASE("local tier: an expired entry is a miss and is dropped") {
  LocalTier tier(LocalTierOptions{.max_entries = 10});
  const auto t0 = Clock::now();
  REQUIRE(tier.put("k", entry_of(7, 1, 0, t0 + 10ms), tier.stamp("k")));
  const auto hit = tier.get("k", t0 + 9ms);
  REQUIRE(hit);
  CHECK(value_of(*hit) == 7);
  CHECK_FALSE(tier.get("k", t0 + 10ms));
  CHECK(tier.stats().entries == 0);
  CHECK_FALSE(tier.get("k", t0));  // dropped, not only hidden
  const auto s = tier.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 2);
  CHECK(s.expirations == 1);
}

TEST_CASE("local tier: an invalidate between stamp and put refuses the put") {
  LocalTier tier(LocalTierOptions{.max_entries = 100});
  const auto stamp = tier.stamp("k");  // the filler, before it reads the value
  tier.invalidate("k");                // a writer's invalidation arrives meanwhile
  CHECK_FALSE(tier.put("k", entry_of(1), stamp));
  CHECK_FALSE(tier.get("k", Clock::now()));
  CHECK(tier.stats().rejected_stale == 1);
  // A fill that starts after the invalidation installs.
  CHECK(tier.put("k", entry_of(2), tier.stamp("k")));
  CHECK(value_of(*tier.get("k", Clock::now())) == 2);
}

TEST_CASE("local tier: an invalidate after put drops the entry") {
  LocalTier tier(LocalTierOptions{.max_entries = 100});
  REQUIRE(tier.put("k", entry_of(1), tier.stamp("k")));
  tier.invalidate("k");
  CHECK_FALSE(tier.get("k", Clock::now()));
}

TEST_CASE("local tier: an invalidate of another key does not refuse a put") {
  // With 65536 buckets these two keys do not share one (a shared bucket would
  // only refuse the put: a false conflict, safe but not what is checked here).
  LocalTier tier(LocalTierOptions{.max_entries = 100, .stamp_buckets = 65536});
  const auto stamp = tier.stamp("a");
  tier.invalidate("b");
  CHECK(tier.put("a", entry_of(1), stamp));
}

TEST_CASE("local tier: clear drops everything and refuses every older stamp") {
  LocalTier tier(LocalTierOptions{.max_entries = 1000});
  std::vector<std::uint64_t> stamps;
  for (int i = 0; i < 100; ++i) {
    const std::string k = "k" + std::to_string(i);
    REQUIRE(tier.put(k, entry_of(i), tier.stamp(k)));
    stamps.push_back(tier.stamp(k));
  }
  tier.clear();
  CHECK(tier.stats().entries == 0);
  for (int i = 0; i < 100; ++i) {
    const std::string k = "k" + std::to_string(i);
    CHECK_FALSE(tier.get(k, Clock::now()));
    CHECK_FALSE(tier.put(k, entry_of(i), stamps[i]));
    CHECK(tier.put(k, entry_of(i), tier.stamp(k)));
  }
}

TEST_CASE("local tier: a put never replaces an entry by a lower version") {
  LocalTier tier(LocalTierOptions{.max_entries = 10});
  REQUIRE(tier.put("k", entry_of(5, 1, 5), tier.stamp("k")));
  CHECK_FALSE(tier.put("k", entry_of(4, 1, 4), tier.stamp("k")));
  CHECK(value_of(*tier.get("k", Clock::now())) == 5);
  CHECK(tier.put("k", entry_of(6, 1, 6), tier.stamp("k")));
  CHECK(value_of(*tier.get("k", Clock::now())) == 6);
}

TEST_CASE("local tier: W-TinyLFU keeps a hot key over a scan of cold keys that LRU loses it to") {
  constexpr std::size_t capacity = 100;
  LocalTier tier(LocalTierOptions{.max_entries = capacity, .shards = 1});
  Lru lru(capacity);
  for (int i = 0; i < 8; ++i) {
    get_or_fill(tier, "hot");
    lru.access("hot");
  }
  // A scan: 5 × capacity keys, each requested once.
  for (std::size_t i = 0; i < 5 * capacity; ++i) {
    const std::string k = "cold" + std::to_string(i);
    get_or_fill(tier, k);
    lru.access(k);
  }
  CHECK_FALSE(lru.access("hot"));
  CHECK(tier.get("hot", Clock::now()));
  CHECK(tier.stats().rejected_admission > 0);
  CHECK(tier.stats().entries <= capacity);
}

TEST_CASE("local tier: a newly popular key wins its admission against a colder victim") {
  constexpr std::size_t capacity = 100;
  LocalTier tier(LocalTierOptions{.max_entries = capacity, .shards = 1});
  for (std::size_t i = 0; i < 2 * capacity; ++i) get_or_fill(tier, "old" + std::to_string(i));
  for (int i = 0; i < 5; ++i) get_or_fill(tier, "new");  // a miss, then hits in the window
  for (std::size_t i = 0; i < capacity / 2; ++i) get_or_fill(tier, "later" + std::to_string(i));
  CHECK(tier.get("new", Clock::now()));
}

TEST_CASE("local tier: hits taken by concurrent readers without the shard lock are all counted and reach the policy") {
  constexpr std::size_t capacity = 100;
  LocalTier tier(LocalTierOptions{.max_entries = capacity, .shards = 1});
  get_or_fill(tier, "hot");
  constexpr int kThreads = 4, kHits = 2000;
  std::atomic<int> missed{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kThreads; ++t)
    readers.emplace_back([&] {
      for (int i = 0; i < kHits; ++i) missed += !tier.get("hot", Clock::now());
    });
  for (auto& r : readers) r.join();
  REQUIRE(missed == 0);
  CHECK(tier.stats().hits == kThreads * kHits);
  // The buffered hits made "hot" frequent: a scan does not push it out.
  for (std::size_t i = 0; i < 5 * capacity; ++i) get_or_fill(tier, "cold" + std::to_string(i));
  CHECK(tier.get("hot", Clock::now()));
}

TEST_CASE("local tier: jitter shortens a ttl by at most 10 percent, the same for a key every time") {
  std::set<long> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string k = "k" + std::to_string(i);
    const auto j = jittered(60'000ms, k);
    CHECK(j <= 60'000ms);
    CHECK(j >= 54'000ms);
    CHECK(j == jittered(60'000ms, k));
    seen.insert(j.count());
  }
  CHECK(seen.size() > 100);  // keys filled together expire apart
  CHECK(jittered(0ms, "k") == 0ms);
  CHECK(jittered(std::chrono::milliseconds::max(), "k") <= std::chrono::milliseconds::max());
}

// Writers bump a key's source generation, then invalidate; fillers take a
// stamp, read the generation and put it; readers check that a hit is never
// older than a write that had completed (generation bumped and invalidated)
// before the read began. A clearer empties the tier now and then.
TEST_CASE("local tier: concurrent get, put, invalidate and clear never serve a value older than a completed write") {
  constexpr int keys = 512;
  constexpr int threads = 8;
  constexpr int ops = 50000;
  LocalTier tier(LocalTierOptions{.max_entries = 200, .shards = 4, .stamp_buckets = 64});
  std::vector<std::atomic<long>> source(keys);
  std::vector<std::atomic<long>> completed(keys);
  for (int i = 0; i < keys; ++i) source[i] = completed[i] = 0;
  std::atomic<long> stale{0}, hits{0};
  std::atomic<bool> stop{false};

  auto worker = [&](int id) {
    std::mt19937 rng(id);
    std::uniform_int_distribution<int> pick(0, keys - 1), action(0, 99);
    for (int i = 0; i < ops; ++i) {
      const int k = pick(rng);
      const std::string key = "k" + std::to_string(k);
      const int a = action(rng);
      if (a < 10) {  // write
        const long g = source[k].fetch_add(1) + 1;
        tier.invalidate(key);
        long c = completed[k].load();
        while (c < g && !completed[k].compare_exchange_weak(c, g)) {
        }
      } else if (a < 40) {  // fill
        const auto stamp = tier.stamp(key);
        const long g = source[k].load();
        tier.put(key, entry_of(g, 1, 0), stamp);
      } else {  // read
        const long done = completed[k].load();
        if (auto e = tier.get(key, Clock::now())) {
          ++hits;
          if (value_of(*e) < done) ++stale;
        }
      }
    }
  };
  std::thread clearer([&] {
    while (!stop) {
      std::this_thread::sleep_for(2ms);
      tier.clear();
    }
  });
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  for (auto& t : pool) t.join();
  stop = true;
  clearer.join();

  CHECK(stale == 0);
  CHECK(hits > 0);
  const auto s = tier.stats();
  CHECK(s.entries <= 200);
  CHECK(s.hits == static_cast<std::uint64_t>(hits.load()));
}

TEST_CASE("local tier: visit copies a hit inside the read and refuses a tier call made from there") {
  LocalTier tier(LocalTierOptions{.max_entries = 100, .shards = 1});
  REQUIRE(tier.put("k", entry_of(7), tier.stamp("k")));
  long seen = 0;
  CHECK(tier.visit("k", Clock::now(), [&](const LocalEntry& e) { seen = value_of(e); }));
  CHECK(seen == 7);
  CHECK_FALSE(tier.visit("absent", Clock::now(), [&](const LocalEntry&) { seen = -1; }));
  CHECK(seen == 7);

  // A copy that used the tier (a cached type whose copy constructor calls a
  // cached method) would wait for its own read: it throws instead, every time.
  CHECK_THROWS_AS(tier.visit("k", Clock::now(), [&](const LocalEntry&) { tier.invalidate("k"); }), weave::UsageError);
  CHECK_THROWS_AS(tier.visit("k", Clock::now(), [&](const LocalEntry&) { tier.get("k", Clock::now()); }),
                  weave::UsageError);
  CHECK_THROWS_AS(tier.visit("k", Clock::now(), [&](const LocalEntry&) { tier.put("j", entry_of(1), 0); }),
                  weave::UsageError);
  // The throw left the read: a writer on another thread gets in, and the
  // entry is still there for this one.
  std::thread([&] { tier.invalidate("other"); }).join();
  CHECK(tier.visit("k", Clock::now(), [&](const LocalEntry& e) { seen = value_of(e) + 1; }));
  CHECK(seen == 8);
  tier.invalidate("k");
  CHECK_FALSE(tier.get("k", Clock::now()));
}
