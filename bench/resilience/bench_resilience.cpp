// What each in-process resilience policy costs when nothing goes wrong, as
// differences to a baseline timed in the same turns (Google Benchmark;
// the VM's load swings, so no figure is judged alone):
//   closed path over the empty chain   each run alternates 64 calls through
//                                      a [[noop]] method and 64 through the
//                                      policy's; target: <= 30 ns over it
//   the same from code                 weave::retry / timeout / CircuitBreaker::
//                                      call / Bulkhead::enter around a lambda,
//                                      over the bare lambda
//   shared breaker over the local one  [[circuit_breaker(shared=true)]] against
//                                      the same local one in alternating turns
//                                      (its store: mem://, or WEAVE_RESILIENCE_URL);
//                                      target: <= 1.1x
//   shared breaker opening             with a redis-server of its own: from one
//                                      runtime's report opening it to another
//                                      runtime's cached state being open (the
//                                      report's round trip plus the feed);
//                                      target: <= 10 ms
//   async timeout overshoot            an awaitable body in a 10 s timer under
//                                      [[timeout(after=20ms)]]: how long after
//                                      the deadline the caller has
//                                      TimeoutExceeded (target: <= 5 ms)
// Usage: bench_resilience [--benchmark_* flags]
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench_report.h"
#include "redis_server.h"
#include "resilience/resilience_runtime.h"
#include "resilience_service.weave.h"
#include "weave/bulkhead.h"
#include "weave/circuit_breaker.h"
#include "weave/interceptor.h"
#include "weave/resilience.h"
#include "weave/retry.h"
#include "weave/timeout.h"
#include "weave/woven.h"
#if defined(BENCH_WITH_ASYNC)
#  include "async_resilience_service.weave.h"
#  include "weave/asio.h"
#  include "weave/error.h"
#endif

using Clock = std::chrono::steady_clock;

long Guarded::empty_chain(long x) { return x + 1; }
long Guarded::retried(long x) { return x + 1; }
long Guarded::timed(long x) { return x + 1; }
long Guarded::bulkheaded(long x) { return x + 1; }
long Guarded::breaker_count(long x) { return x + 1; }
long Guarded::breaker_time(long x) { return x + 1; }
long Guarded::breaker_shared(long x) { return x + 1; }

namespace {

constexpr int kTurn = 64;

weave::Woven<Guarded>& woven() {
  static weave::Woven<Guarded> w;
  return w;
}

// Turns of kTurn calls of `base` then kTurn of `measured`, each timed.
template <class Base, class Measured>
void alternate(benchmark::State& state, Base&& base, Measured&& measured) {
  std::chrono::nanoseconds base_t{0}, measured_t{0};
  long calls = 0, i = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int k = 0; k < kTurn; ++k) benchmark::DoNotOptimize(base(++i));
    const auto t1 = Clock::now();
    for (int k = 0; k < kTurn; ++k) benchmark::DoNotOptimize(measured(++i));
    const auto t2 = Clock::now();
    base_t += t1 - t0;
    measured_t += t2 - t1;
    calls += kTurn;
  }
  const double n = static_cast<double>(calls);
  state.counters["base_ns"] = static_cast<double>(base_t.count()) / n;
  state.counters["policy_ns"] = static_cast<double>(measured_t.count()) / n;
  state.counters["over_ns"] = static_cast<double>((measured_t - base_t).count()) / n;
}

template <long (Guarded::*Method)(long)>
void woven_closed_path(benchmark::State& state) {
  Guarded& g = woven();
  alternate(state, [&g](long x) { return g.empty_chain(x); }, [&g](long x) { return (g.*Method)(x); });
}
BENCHMARK(woven_closed_path<&Guarded::retried>)->Name("woven/retry");
BENCHMARK(woven_closed_path<&Guarded::timed>)->Name("woven/timeout");
BENCHMARK(woven_closed_path<&Guarded::bulkheaded>)->Name("woven/bulkhead");
BENCHMARK(woven_closed_path<&Guarded::breaker_count>)->Name("woven/circuit_breaker_count");
BENCHMARK(woven_closed_path<&Guarded::breaker_time>)->Name("woven/circuit_breaker_time");
BENCHMARK(woven_closed_path<&Guarded::breaker_shared>)->Name("woven/circuit_breaker_shared");

// The shared breaker against the local one (the same window), turn by turn.
void woven_shared_over_local(benchmark::State& state) {
  Guarded& g = woven();
  alternate(state, [&g](long x) { return g.breaker_time(x); }, [&g](long x) { return g.breaker_shared(x); });
}
BENCHMARK(woven_shared_over_local)->Name("woven/shared_vs_local");

[[gnu::noinline]] long body(long x) { return x + 1; }

void code_retry(benchmark::State& state) {
  const weave::RetryPolicy p{};
  alternate(state, body, [&p](long x) { return weave::retry(p, [x] { return body(x); }); });
}
BENCHMARK(code_retry)->Name("code/retry");

void code_timeout(benchmark::State& state) {
  alternate(state, body, [](long x) { return weave::timeout(std::chrono::seconds(10), [x] { return body(x); }); });
}
BENCHMARK(code_timeout)->Name("code/timeout");

void code_bulkhead(benchmark::State& state) {
  static const weave::Bulkhead b("bench:code", 64);
  alternate(state, body, [](long x) {
    const weave::BulkheadSlot slot = b.try_enter();
    return body(x);
  });
}
BENCHMARK(code_bulkhead)->Name("code/bulkhead");

void code_circuit_breaker(benchmark::State& state) {
  static const weave::CircuitBreaker b("bench:code", {.window_calls = 100});
  alternate(state, body, [](long x) { return b.call([x] { return body(x); }); });
}
BENCHMARK(code_circuit_breaker)->Name("code/circuit_breaker");

// From runtime A's report opening a shared breaker to runtime B (its own
// connections and feed) holding it open, on a redis-server of its own: us.
std::vector<double> shared_open_us(int samples) {
  redis_test::RedisServer server;
  weave::ResilienceOptions o;
  o.url = server.url();
  o.flush_interval = std::chrono::hours(1);  // (the reports here are the bench's own)
  weave::detail::ResilienceRuntime a(o), b(o);
  const weave::CircuitBreakerPolicy policy{.window = std::chrono::seconds(60), .min_calls = 20, .shared = true};
  std::vector<double> out;
  for (int s = 0; s < samples; ++s) {
    const std::string name = "bench:open:" + std::to_string(s);
    weave::detail::SharedCircuit& ca = a.shared_circuit(name, policy);
    weave::detail::SharedCircuit& cb = b.shared_circuit(name, policy);
    for (int i = 0; i < 20; ++i) ca.count(ca.phase(), 2, false);
    const auto start = Clock::now();
    ca.flush(a.circuits());
    while ((cb.phase() & 3) != static_cast<std::uint64_t>(weave::CircuitState::open) &&
           Clock::now() - start < std::chrono::seconds(1)) {
    }
    if ((cb.phase() & 3) == static_cast<std::uint64_t>(weave::CircuitState::open))
      out.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return out;
}

#if defined(BENCH_WITH_ASYNC)
// How long after [[timeout(after=20ms)]]'s deadline the caller of a body
// waiting 10 s has its TimeoutExceeded.
std::vector<double> timeout_overshoot_us(int samples) {
  weave::Woven<Sleeper> sleeper;
  std::vector<double> out;
  for (int s = 0; s < samples; ++s) {
    weave::net::io_context io;
    Clock::time_point start, ended;
    bool timed_out = false;
    weave::net::co_spawn(io, [&]() -> weave::net::awaitable<void> {
      start = Clock::now();
      try {
        co_await sleeper.sleep(10'000);
      } catch (const weave::TimeoutExceeded&) {
        timed_out = true;
      }
      ended = Clock::now();
    }, weave::net::detached);
    io.run();
    if (timed_out) out.push_back(std::chrono::duration<double, std::micro>(ended - start).count() - 20'000.0);
  }
  return out;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  weave::InterceptorRegistry::global().add("noop", [](weave::Invocation& inv) { inv.proceed(); });
  // A service has threads: with one, libstdc++'s shared_ptr counts become
  // atomic operations (in a process of one thread they are plain ones).
  std::thread idle([] { std::this_thread::sleep_for(std::chrono::hours(1)); });
  idle.detach();
  benchmark::Initialize(&argc, argv);
  bench::RunCollector runs;
  benchmark::RunSpecifiedBenchmarks(&runs);
  std::printf("\nclosed path, ns per call over its baseline in the same turns (target <= 30 ns):\n");
  for (const char* name : {"woven/retry", "woven/timeout", "woven/bulkhead", "woven/circuit_breaker_count",
                           "woven/circuit_breaker_time", "woven/circuit_breaker_shared", "code/retry", "code/timeout",
                           "code/bulkhead", "code/circuit_breaker"})
    std::printf("  %-30s %6.1f ns over %6.1f ns\n", name, runs.counter(name, "over_ns"), runs.counter(name, "base_ns"));
  std::printf("\nshared breaker's closed path over the local one's (same window, same turns): %.1f ns vs %.1f ns, "
              "%.2fx (target <= 1.1x)\n",
              runs.counter("woven/shared_vs_local", "policy_ns"), runs.counter("woven/shared_vs_local", "base_ns"),
              runs.counter("woven/shared_vs_local", "policy_ns") / runs.counter("woven/shared_vs_local", "base_ns"));
  const std::vector<double> open = shared_open_us(50);
  std::printf("shared breaker opened by one runtime's report, held open by another's cache after: p50 %.0f us, "
              "p99 %.0f us, max %.0f us (%zu/50; target <= 10 ms)\n",
              bench::percentile(open, 0.5), bench::percentile(open, 0.99), bench::percentile(open, 1.0), open.size());
#if defined(BENCH_WITH_ASYNC)
  const std::vector<double> late = timeout_overshoot_us(50);
  std::printf("\nasync [[timeout(after=20ms)]] on a 10 s body: TimeoutExceeded %zu/50 times, after the deadline by "
              "p50 %.0f us, p99 %.0f us, max %.0f us (target <= 5 ms)\n",
              late.size(), bench::percentile(late, 0.5), bench::percentile(late, 0.99), bench::percentile(late, 1.0));
#endif
  benchmark::Shutdown();
  return 0;
}
