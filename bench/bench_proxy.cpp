// What a woven call costs on the embedded path, as ratios to baselines
// measured in the same run (Google Benchmark; machines are noisy, so no figure
// is judged alone):
//   direct virtual call            the floor
//   proxy, empty chain ([[noop]])  target: at most 10 ns over the direct call
//   std::mutex lock + unlock       what an in-process lock costs by hand
//   proxy, mem:// lock             fixed ttl and watchdog mode, as multiples of
//                                  std::mutex; targets: at most 25x and 30x
//                                  (the *_per_mutex runs time both in turns,
//                                  64 calls then 256 lock + unlock pairs, so a
//                                  load swing of the VM falls on both alike)
//   mem:// lock, N threads         each thread its own key; throughput vs one thread
// Usage: bench_proxy [--benchmark_* flags, e.g. --benchmark_out=r.json --benchmark_out_format=json]
#include <benchmark/benchmark.h>

#include "bench_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "bench_service.weave.h"
#include "weave/interceptor.h"
#include "weave/lock.h"

namespace {

weave::Woven<Counter>& woven() {
  static weave::Woven<Counter> w;
  return w;
}

void direct_virtual(benchmark::State& state) {
  static Counter plain_object;
  Counter& c = plain_object;
  long i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(c.plain(++i));
}
BENCHMARK(direct_virtual);

void empty_chain(benchmark::State& state) {
  Counter& c = woven();
  long i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(c.through_empty_chain(++i));
}
BENCHMARK(empty_chain);

// One hot key per thread: the lock path, not key creation.
void mem_lock_fixed_ttl(benchmark::State& state) {
  Counter& c = woven();
  const long key = state.thread_index();
  for (auto _ : state) benchmark::DoNotOptimize(c.through_lock(key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(mem_lock_fixed_ttl)->ThreadRange(1, 8)->UseRealTime();

void mem_lock_watchdog(benchmark::State& state) {
  Counter& c = woven();
  const long key = state.thread_index();
  for (auto _ : state) benchmark::DoNotOptimize(c.through_watchdog_lock(key));
}
BENCHMARK(mem_lock_watchdog);

void std_mutex(benchmark::State& state) {
  static std::mutex m;
  long x = 0;
  for (auto _ : state) {
    m.lock();
    benchmark::DoNotOptimize(++x);
    m.unlock();
  }
}
BENCHMARK(std_mutex);

// One woven call as a multiple of a std::mutex lock + unlock, both timed in
// alternating blocks of the same run (counter x_std_mutex). The mutex block
// is one function for every woven call measured against it: its code (and
// its alignment) is the same for all.
constexpr int kTurnCalls = 64, kTurnPairs = 256;
[[gnu::noinline]] std::chrono::steady_clock::duration mutex_turn(std::mutex& m, long& x) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < kTurnPairs; ++n) {
    m.lock();
    benchmark::DoNotOptimize(++x);
    m.unlock();
  }
  return std::chrono::steady_clock::now() - t0;
}
template <class Call>
void per_mutex(benchmark::State& state, Call call) {
  using Clock = std::chrono::steady_clock;
  std::mutex m;
  long x = 0;
  Clock::duration woven{}, mutex{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int n = 0; n < kTurnCalls; ++n) benchmark::DoNotOptimize(call());
    woven += Clock::now() - t0;
    mutex += mutex_turn(m, x);
  }
  const auto iterations = double(state.iterations());
  const double call_ns = std::chrono::duration<double, std::nano>(woven).count() / (kTurnCalls * iterations);
  const double pair_ns = std::chrono::duration<double, std::nano>(mutex).count() / (kTurnPairs * iterations);
  state.counters["call_ns"] = call_ns;
  state.counters["mutex_ns"] = pair_ns;
  state.counters["x_std_mutex"] = call_ns / pair_ns;
}
void mem_lock_fixed_ttl_per_mutex(benchmark::State& state) {
  per_mutex(state, [&c = woven()] { return c.through_lock(0); });
}
BENCHMARK(mem_lock_fixed_ttl_per_mutex);
void mem_lock_watchdog_per_mutex(benchmark::State& state) {
  per_mutex(state, [&c = woven()] { return c.through_watchdog_lock(0); });
}
BENCHMARK(mem_lock_watchdog_per_mutex);

}  // namespace

int main(int argc, char** argv) {
  // A service has threads: from the first one on, the C++ library counts
  // shared_ptr references atomically for good. Started here, so every figure
  // (the first single-threaded one too) pays what it pays in a service.
  std::thread([] {}).join();
  weave::InterceptorRegistry::global().add("noop", [](weave::Invocation& inv) { inv.proceed(); });
  weave::configure_locks({.url = "mem://bench"});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  bench::RunCollector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  const double direct = collector.ns("direct_virtual");
  const double empty = collector.ns("empty_chain");
  const double fixed = collector.ns("mem_lock_fixed_ttl/real_time/threads:1");
  const double watchdog = collector.ns("mem_lock_watchdog");
  const double mutex = collector.ns("std_mutex");
  const double one = collector.per_second("mem_lock_fixed_ttl/real_time/threads:1");
  const double eight = collector.per_second("mem_lock_fixed_ttl/real_time/threads:8");
  std::printf("\n%-40s %10s %10s %s\n", "figure", "value", "ratio", "target");
  if (direct > 0 && empty > 0)
    std::printf("%-40s %8.1f ns %9.2fx %s\n", "empty chain over the direct call", empty - direct, empty / direct,
                "<= 10 ns");
  if (mutex > 0 && direct > 0)  // the lock figures as multiples of an uncontended std::mutex lock + unlock
    std::printf("%-40s %8.1f ns %9.2fx\n", "std::mutex lock + unlock", mutex, mutex / direct);
  if (mutex > 0 && fixed > 0)
    std::printf("%-40s %8.1f ns %9.2fx %s\n", "mem:// lock, fixed ttl", fixed, fixed / mutex, "<= 25x std::mutex");
  if (mutex > 0 && watchdog > 0)
    std::printf("%-40s %8.1f ns %9.2fx %s\n", "mem:// lock, watchdog mode", watchdog, watchdog / mutex,
                "<= 30x std::mutex");
  for (const auto& [name, label, target] :
       {std::tuple{"mem_lock_fixed_ttl_per_mutex", "mem:// lock, fixed ttl, in turns", "<= 25x std::mutex"},
        std::tuple{"mem_lock_watchdog_per_mutex", "mem:// lock, watchdog, in turns", "<= 30x std::mutex"}})
    if (const double x = collector.counter(name, "x_std_mutex"); x > 0)
      std::printf("%-40s %11s %9.2fx %s\n", label, "", x, target);
  if (one > 0 && eight > 0) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf("%-40s %8.2f x  (%u cores: at most %ux) %s\n", "8 threads / 1 thread, own keys", eight / one,
                cores, std::min(8u, cores), ">= 6x on 8 cores");
  }
  return 0;
}
