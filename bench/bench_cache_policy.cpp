// [[cache]]'s local tier (src/cache/local_tier.h), two questions, answered in
// one run (Google Benchmark; ratios, not lone figures, are the result):
//
// 1. Hit ratio of its eviction policy (W-TinyLFU) against plain LRU, with the
//    tier at 1% of the key space, on Zipf-distributed traces (s = 0.8, 0.99,
//    1.2): hit_ratio/<policy>/<s> report counter `hit_ratio`. Policies:
//      lru          a plain LRU (std::list + std::unordered_map), the baseline
//      wtinylfu     LocalTier as the interceptor builds it (shards by hardware threads)
//      wtinylfu_1   LocalTier with one shard (the policy unsplit)
//      oracle       the best any cache of that size can do on this trace's
//                   distribution (the most probable 1% of keys always resident)
//    Trace: WEAVE_BENCH_KEYS keys (default 1,000,000), WEAVE_BENCH_REQUESTS
//    requests (default 10,000,000), independent draws, a fixed seed per s;
//    key ranks are shuffled over key names. A miss is filled (get, then put),
//    as read-through does.
//
// 2. What a hit costs: LocalTier::get on a resident key against an
//    uncontended std::shared_mutex-guarded std::unordered_map lookup returning
//    the same entry, with 1, 2 and 8 threads (items_per_second: throughput).
//    `now` is taken once (local_tier_hit_with_clock adds the steady_clock::now()
//    the interceptor reads per call); mutex_map_hit is the same map behind one
//    std::mutex (a single exclusive lock).
//
// Usage: bench_cache_policy [--benchmark_filter=hit_ratio | --benchmark_filter=_hit ...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/local_tier.h"

namespace {

using weave::detail::LocalEntry;
using weave::detail::LocalTier;
using weave::detail::LocalTierOptions;
using Clock = std::chrono::steady_clock;

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<std::size_t>(std::strtoull(v, nullptr, 10)) : fallback;
}

struct Trace {
  std::vector<std::string> names;      // key id -> key
  std::vector<std::uint32_t> requests;  // key ids
  double oracle = 0;                    // probability mass of the most probable `capacity` keys
  std::size_t capacity = 0;
};

const Trace& zipf_trace(double s) {
  static std::map<double, Trace> traces;
  Trace& t = traces[s];
  if (!t.requests.empty()) return t;
  const std::size_t keys = env_size("WEAVE_BENCH_KEYS", 1'000'000);
  const std::size_t requests = env_size("WEAVE_BENCH_REQUESTS", 10'000'000);
  t.capacity = std::max<std::size_t>(1, keys / 100);
  std::vector<double> cdf(keys);
  double sum = 0;
  for (std::size_t r = 0; r < keys; ++r) cdf[r] = sum += 1.0 / std::pow(static_cast<double>(r + 1), s);
  t.oracle = cdf[t.capacity - 1] / sum;
  std::vector<std::uint32_t> id_of_rank(keys);
  std::iota(id_of_rank.begin(), id_of_rank.end(), 0u);
  std::mt19937_64 rng(0x5eed + static_cast<std::uint64_t>(s * 1000));
  std::shuffle(id_of_rank.begin(), id_of_rank.end(), rng);
  t.names.reserve(keys);
  for (std::size_t i = 0; i < keys; ++i) t.names.push_back("item:" + std::to_string(i));
  std::uniform_real_distribution<double> u(0, sum);
  t.requests.resize(requests);
  for (auto& r : t.requests) {
    const auto rank = std::upper_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin();
    r = id_of_rank[std::min<std::size_t>(static_cast<std::size_t>(rank), keys - 1)];
  }
  return t;
}

class Lru {
 public:
  explicit Lru(std::size_t capacity) : capacity_(capacity) { index_.reserve(capacity * 2); }
  bool access(const std::string& key) {
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.end(), order_, it->second);
      return true;
    }
    order_.push_back(key);
    index_.emplace(order_.back(), std::prev(order_.end()));
    if (order_.size() > capacity_) {
      index_.erase(order_.front());
      order_.pop_front();
    }
    return false;
  }

 private:
  std::size_t capacity_;
  std::list<std::string> order_;
  std::unordered_map<std::string_view, std::list<std::string>::iterator> index_;
};

enum class Policy { lru, wtinylfu, wtinylfu_1, oracle };

void hit_ratio(benchmark::State& state, Policy policy, double s) {
  const Trace& t = zipf_trace(s);
  std::size_t hits = 0;
  for (auto _ : state) {
    hits = 0;
    if (policy == Policy::oracle) {
      hits = static_cast<std::size_t>(std::llround(t.oracle * static_cast<double>(t.requests.size())));
    } else if (policy == Policy::lru) {
      Lru lru(t.capacity);
      for (std::uint32_t id : t.requests) hits += lru.access(t.names[id]);
    } else {
      LocalTier tier(LocalTierOptions{.max_entries = t.capacity, .shards = policy == Policy::wtinylfu_1 ? 1u : 0u});
      const auto now = Clock::now();
      const auto value = std::make_shared<const int>(0);
      for (std::uint32_t id : t.requests) {
        const std::string& key = t.names[id];
        if (tier.get(key, now)) {
          ++hits;
        } else {
          tier.put(key, LocalEntry{value, 0, Clock::time_point::max(), 1}, tier.stamp(key));
        }
      }
      state.counters["shards"] = tier.options().shards;
    }
  }
  state.counters["hit_ratio"] = static_cast<double>(hits) / static_cast<double>(t.requests.size());
  state.counters["capacity"] = static_cast<double>(t.capacity);
  state.counters["keys"] = static_cast<double>(t.names.size());
  if (policy != Policy::oracle) state.SetItemsProcessed(static_cast<std::int64_t>(t.requests.size()));
}

#define WEAVE_HIT_RATIO(policy, s)                                                         \
  BENCHMARK_CAPTURE(hit_ratio, policy/s, Policy::policy, s)->Iterations(1)->Unit(benchmark::kMillisecond)
#define WEAVE_HIT_RATIOS(s) \
  WEAVE_HIT_RATIO(lru, s);  \
  WEAVE_HIT_RATIO(wtinylfu, s); \
  WEAVE_HIT_RATIO(wtinylfu_1, s); \
  WEAVE_HIT_RATIO(oracle, s)
WEAVE_HIT_RATIOS(0.8);
WEAVE_HIT_RATIOS(0.99);
WEAVE_HIT_RATIOS(1.2);

// ---- hit cost ----------------------------------------------------------------

constexpr std::size_t k_resident = 1000;

const std::vector<std::string>& resident_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (std::size_t i = 0; i < k_resident; ++i) k.push_back("product:" + std::to_string(100000 + i));
    return k;
  }();
  return keys;
}

LocalEntry sample_entry() {
  return LocalEntry{std::make_shared<const int>(42), 1, Clock::time_point::max(), 64};
}

LocalTier& filled_tier() {
  static LocalTier tier(LocalTierOptions{.max_entries = 10'000});
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto& k : resident_keys()) tier.put(k, sample_entry(), tier.stamp(k));
  });
  return tier;
}

// Walks the resident keys from a per-thread start, so threads rarely touch one key at once.
void local_tier_hit(benchmark::State& state) {
  LocalTier& tier = filled_tier();
  const auto& keys = resident_keys();
  const auto now = Clock::now();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 131;
  std::size_t missed = 0;
  for (auto _ : state) {
    auto e = tier.get(keys[i], now);
    missed += !e;
    benchmark::DoNotOptimize(e);
    if (++i == k_resident) i = 0;
  }
  if (missed) state.SkipWithError("a resident key missed");
  state.SetItemsProcessed(state.iterations());
}

struct LockedMap {
  mutable std::shared_mutex mu;
  std::unordered_map<std::string, LocalEntry> map;
  std::optional<LocalEntry> get(const std::string& key) const {
    std::shared_lock lock(mu);
    const auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }
};

LockedMap& filled_map() {
  static LockedMap m;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto& k : resident_keys()) m.map.emplace(k, sample_entry());
  });
  return m;
}

void shared_mutex_map_hit(benchmark::State& state) {
  LockedMap& m = filled_map();
  const auto& keys = resident_keys();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 131;
  for (auto _ : state) {
    auto e = m.get(keys[i]);
    benchmark::DoNotOptimize(e);
    if (++i == k_resident) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

// The same with the clock read the interceptor does on every call.
void local_tier_hit_with_clock(benchmark::State& state) {
  LocalTier& tier = filled_tier();
  const auto& keys = resident_keys();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 131;
  for (auto _ : state) {
    auto e = tier.get(keys[i], Clock::now());
    benchmark::DoNotOptimize(e);
    if (++i == k_resident) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

// One exclusive lock around the map: what "a single-lock map" costs when shared.
struct MutexMap {
  std::mutex mu;
  std::unordered_map<std::string, LocalEntry> map;
  std::optional<LocalEntry> get(const std::string& key) {
    std::lock_guard lock(mu);
    const auto it = map.find(key);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }
};

void mutex_map_hit(benchmark::State& state) {
  static MutexMap m;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const auto& k : resident_keys()) m.map.emplace(k, sample_entry());
  });
  const auto& keys = resident_keys();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 131;
  for (auto _ : state) {
    auto e = m.get(keys[i]);
    benchmark::DoNotOptimize(e);
    if (++i == k_resident) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(local_tier_hit)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();
BENCHMARK(local_tier_hit_with_clock)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(shared_mutex_map_hit)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();
BENCHMARK(mutex_map_hit)->Threads(1)->Threads(2)->Threads(8)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
