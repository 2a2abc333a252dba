// [[cache]] on Redis, as ratios to baselines measured in the same run
// (Google Benchmark like bench_proxy; starts its own redis-server on a free
// loopback port). Run by hand:
//   bench_cache [--benchmark_* flags] [--rounds=<invalidation rounds, default 2000>]
//               [--listeners=<other processes hearing the invalidations, default 0>]
//
//   local_hit          a woven-shape [[cache]] call (cache_methods.h) answered by the local tier
//   local_hit_hot      ... every thread on the same key
//   uncached           the same call with no interceptor (the method runs)
//   shared_mutex_map   an uncontended std::shared_mutex + std::unordered_map lookup (a copy out)
//   mutex_map          the same under one std::mutex (the "single-lock map" of the 8-thread target)
//   remote_hit         tier=remote: one GET, JSON decoded into the result
//   raw_get            a raw hiredis GET of the same bytes on one connection (the floor)
//   raw_get_decode     ... plus the same JSON decode
//   put                cache_put of the thread's own key: its script (which publishes the
//                      invalidation) and the local copy; 1 and 8 writers (items_per_second)
// and, after them, the invalidation delay across processes: this program
// re-executes itself as a watcher holding a local copy; write returns here ->
// the watcher's invalidations_received moves (its local copy is gone), p50 /
// p99 in loopback round trips (PING, timed in the same run).
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache_methods.h"
#include "bench_report.h"
#include "bench_util.h"
#include "redis_server.h"
#include "weave/cache.h"

using cache_test::Catalog;
using cache_test::Find;
using cache_test::Found;

namespace {

using bench::mono_ns;

redis_test::RedisServer* g_server = nullptr;
const std::string kName = "bench";

Catalog& catalog() {
  static Catalog c;
  return c;
}

// The same method with no annotation: the proxy's path with an empty chain.
Found uncached_find(const std::string& name, const std::string& id) {
  static constexpr weave::MethodInfo info{"shop::Catalog::find", "catalog.h", 1, {}, {}, nullptr};
  const std::string rendered[2] = {name, id};
  return weave::detail::invoke<Found>(
      info, {}, rendered, [&]() -> Found { return shop::Product{id, 100}; }, weave::detail::CannotSkip{});
}

// One key per thread ("p<thread>"), in the local tier before timing starts.
void local_hit(benchmark::State& state) {
  const std::string key = "p" + std::to_string(state.thread_index());
  catalog().find(kName, key);
  catalog().find(kName, key);
  for (auto _ : state) benchmark::DoNotOptimize(catalog().find(kName, key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(local_hit)->ThreadRange(1, 8)->UseRealTime();

// Every thread on one key: one shard, one entry (the hot-key case).
void local_hit_hot(benchmark::State& state) {
  catalog().find(kName, "hot");
  catalog().find(kName, "hot");
  for (auto _ : state) benchmark::DoNotOptimize(catalog().find(kName, "hot"));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(local_hit_hot)->ThreadRange(1, 8)->UseRealTime();

void uncached(benchmark::State& state) {
  const std::string key = "p" + std::to_string(state.thread_index());
  for (auto _ : state) benchmark::DoNotOptimize(uncached_find(kName, key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(uncached);

template <class Mutex, bool shared>
struct GuardedMap {
  Mutex mutex;
  std::unordered_map<std::string, Found> map;
  GuardedMap() {
    for (int i = 0; i < 1000; ++i) map["p" + std::to_string(i)] = shop::Product{"p" + std::to_string(i), 100};
  }
  Found get(const std::string& key) {
    if constexpr (shared) {
      std::shared_lock g(mutex);
      return map.find(key)->second;
    } else {
      std::lock_guard g(mutex);
      return map.find(key)->second;
    }
  }
};

void shared_mutex_map(benchmark::State& state) {
  static GuardedMap<std::shared_mutex, true> m;
  const std::string key = "p" + std::to_string(state.thread_index());
  for (auto _ : state) benchmark::DoNotOptimize(m.get(key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(shared_mutex_map)->ThreadRange(1, 8)->UseRealTime();

void mutex_map(benchmark::State& state) {
  static GuardedMap<std::mutex, false> m;
  const std::string key = "p" + std::to_string(state.thread_index());
  for (auto _ : state) benchmark::DoNotOptimize(m.get(key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(mutex_map)->ThreadRange(1, 8)->UseRealTime();

void put(benchmark::State& state) {
  const std::string key = "w" + std::to_string(state.thread_index());
  int cents = 0;
  for (auto _ : state) benchmark::DoNotOptimize(catalog().save(kName, shop::Product{key, ++cents}));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(put)->Threads(1)->Threads(8)->UseRealTime();

void remote_hit(benchmark::State& state) {
  catalog().find(kName, "r1", Find::remote);  // stored in Redis
  for (auto _ : state) benchmark::DoNotOptimize(catalog().find(kName, "r1", Find::remote));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(remote_hit)->UseRealTime();

template <bool decode>
void raw_get(benchmark::State& state) {
  redis_test::Raw raw(g_server->port());
  const std::string k = "{weave:cache:" + kName + ":r1}";
  if (raw.cmd({"GET", k}).nil()) state.SkipWithError("remote_hit must run first (it stores r1)");
  const char* argv[] = {"GET", k.c_str()};
  const std::size_t lens[] = {3, k.size()};
  for (auto _ : state) {
    auto* r = static_cast<redisReply*>(redisCommandArgv(raw.context(), 2, argv, lens));
    if constexpr (decode) {
      const std::string_view entry(r->str, r->len);
      const auto json = entry.substr(entry.find(':') + 1);
      Found f = nlohmann::json::parse(json).get<shop::Product>();
      benchmark::DoNotOptimize(f);
    }
    benchmark::DoNotOptimize(r);
    freeReplyObject(r);
  }
  state.SetItemsProcessed(state.iterations());
}
void raw_get_only(benchmark::State& state) { raw_get<false>(state); }
void raw_get_decode(benchmark::State& state) { raw_get<true>(state); }
BENCHMARK(raw_get_only)->Name("raw_get")->UseRealTime();
BENCHMARK(raw_get_decode)->UseRealTime();


// The watcher process: holds "inv" / "k" in its local tier; for each round,
// reports when the next invalidation arrived, then loads the key again.
int watcher(const std::string& url) {
  weave::configure_cache({.url = url});
  Catalog c;
  auto say = [](const std::string& s) { std::cout << s << '\n' << std::flush; };
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line != "arm") break;
    const std::uint64_t hits = weave::cache_stats("inv").local_hits;
    c.find("inv", "k");
    c.find("inv", "k");
    if (weave::cache_stats("inv").local_hits == hits) {
      say("no-local-copy");
      continue;
    }
    const std::uint64_t seen = weave::cache_stats("inv").invalidations_received;
    say("ready");
    while (weave::cache_stats("inv").invalidations_received == seen) ::sched_yield();
    say(std::to_string(mono_ns()));
  }
  return 0;
}

// A listener process: subscribed to the invalidation feed (one cache call
// starts it), taking every message until its stdin closes.
int listener(const std::string& url) {
  weave::configure_cache({.url = url});
  Catalog c;
  c.find(kName, "listener");
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  return 0;
}

void invalidation_delay(const std::string& self, int rounds) {
  redis_test::Raw raw(g_server->port());
  std::vector<double> ping_us;
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t t0 = mono_ns();
    raw.cmd({"PING"});
    ping_us.push_back(double(mono_ns() - t0) / 1e3);
  }
  redis_test::Child w({self, "--watcher", g_server->url()});
  Catalog c;
  std::vector<double> delay_us;
  int no_copy = 0;
  for (int i = 0; i < rounds; ++i) {
    w.send("arm");
    auto ready = w.line();
    if (ready == std::optional<std::string>("no-local-copy")) {
      ++no_copy;
      continue;
    }
    if (ready != std::optional<std::string>("ready")) throw std::runtime_error("watcher: no answer");
    c.save("inv", shop::Product{"k", i});
    const std::int64_t returned = mono_ns();
    auto at = w.line();
    if (!at) throw std::runtime_error("watcher: no invalidation");
    delay_us.push_back(double(std::stoll(*at) - returned) / 1e3);
  }
  w.send("stop");
  const double rtt = bench::percentile(ping_us, 0.5);
  const double p50 = bench::percentile(delay_us, 0.5), p99 = bench::percentile(delay_us, 0.99);
  std::printf("\ninvalidation delay across processes (write returns -> the other process's copy gone), %zu rounds:\n",
              delay_us.size());
  std::printf("  PING RTT p50 %.1f us, p99 %.1f us\n", rtt, bench::percentile(ping_us, 0.99));
  std::printf("  delay p50 %.1f us (%.2f RTT), p99 %.1f us (%.2f RTT), min %.1f us, max %.1f us%s\n", p50, p50 / rtt,
              p99, p99 / rtt, bench::percentile(delay_us, 0), bench::percentile(delay_us, 1.0),
              no_copy ? " (some rounds had no local copy)" : "");
  std::printf("  (negative: the watcher dropped its copy before the writer's PUBLISH reply was read)\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--watcher") == 0) return watcher(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "--listener") == 0) return listener(argv[2]);
  int rounds = 2000, listeners = 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::atoi(argv[i] + 9);
    else if (std::strncmp(argv[i], "--listeners=", 12) == 0) listeners = std::atoi(argv[i] + 12);
    else args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  redis_test::RedisServer server;
  g_server = &server;
  std::printf("redis-server on 127.0.0.1:%d\n", server.port());
  weave::configure_cache({.url = server.url()});
  std::vector<std::unique_ptr<redis_test::Child>> others;
  for (int i = 0; i < listeners; ++i) {
    others.push_back(std::make_unique<redis_test::Child>(std::vector<std::string>{"/proc/self/exe", "--listener", server.url()}));
    if (others.back()->line() != std::optional<std::string>("ready")) throw std::runtime_error("listener: no answer");
  }

  bench::RunCollector collect;
  benchmark::RunSpecifiedBenchmarks(&collect);
  auto ns = [&](const std::string& name) { return collect.ns(name); };
  auto ips = [&](const std::string& name) { return collect.per_second(name); };
  std::printf("\nratios (same run):\n");
  if (ns("local_hit/real_time/threads:1") > 0) {
    const double hit = ns("local_hit/real_time/threads:1");
    std::printf("  local hit %.1f ns; / uncached %.2fx; / shared_mutex map %.2fx\n", hit, hit / ns("uncached"),
                hit / ns("shared_mutex_map/real_time/threads:1"));
    if (ips("mutex_map/real_time/threads:8") > 0)
      std::printf("  8 threads: local hit %.1f M/s, mutex map %.1f M/s (%.2fx), shared_mutex map %.1f M/s\n",
                  ips("local_hit/real_time/threads:8") / 1e6, ips("mutex_map/real_time/threads:8") / 1e6,
                  ips("local_hit/real_time/threads:8") / ips("mutex_map/real_time/threads:8"),
                  ips("shared_mutex_map/real_time/threads:8") / 1e6);
    if (ips("local_hit_hot/real_time/threads:8") > 0 && ips("mutex_map/real_time/threads:8") > 0)
      std::printf("  8 threads, one hot key: local hit %.1f M/s (%.2fx the mutex map)\n",
                  ips("local_hit_hot/real_time/threads:8") / 1e6,
                  ips("local_hit_hot/real_time/threads:8") / ips("mutex_map/real_time/threads:8"));
  }
  if (ns("remote_hit/real_time") > 0 && ns("raw_get/real_time") > 0)
    std::printf("  remote hit %.1f us; / raw GET %.2fx; / raw GET + decode %.2fx\n", ns("remote_hit/real_time") / 1e3,
                ns("remote_hit/real_time") / ns("raw_get/real_time"),
                ns("remote_hit/real_time") / ns("raw_get_decode/real_time"));
  if (rounds > 0) invalidation_delay("/proc/self/exe", rounds);
  benchmark::Shutdown();
  return 0;
}
