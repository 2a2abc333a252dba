// Rate-limit decisions on Redis, as ratios to a raw floor measured in the
// same run (starts its own redis-server on a free loopback port). Run by hand:
//   bench_quota [--blocks=<interleaved blocks, default 100>] [--threads=<N, default 16>] [--seconds=<S, default 3>]
//
//   decision     RateLimiter::try_acquire on one key (the GCRA script: one round trip)
//   raw_evalsha  the floor: a raw hiredis EVALSHA of a trivial script ("return 1", one key) on one connection
// measured interleaved: blocks of 100 decisions and 100 floor calls alternate, and the median of the block
// ratios is printed (robust to a load that comes and goes); then N threads of this process deciding on one
// hot key for S seconds: decisions a second, and admitted against the limit's bound (rate x elapsed + burst).
#include <hiredis/hiredis.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_report.h"
#include "redis_server.h"
#include "weave/quota.h"
#include "weave/rate_limit.h"

namespace {

std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int flag(int argc, char** argv, const char* name, int fallback) {
  const std::size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') return std::atoi(argv[i] + n + 1);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int blocks = flag(argc, argv, "--blocks", 100), threads = flag(argc, argv, "--threads", 16),
            seconds = flag(argc, argv, "--seconds", 3);
  constexpr int per_block = 100;
  redis_test::RedisServer server;
  weave::configure_quota({.url = server.url()});
  weave::RateLimiter limits;
  const weave::RateLimit generous{.permits = 1'000'000'000, .per = std::chrono::seconds(1)};

  redisContext* raw = redisConnect("127.0.0.1", server.port());
  if (!raw || raw->err) {
    std::fprintf(stderr, "cannot connect\n");
    return 1;
  }
  auto* loaded = static_cast<redisReply*>(redisCommand(raw, "SCRIPT LOAD %s", "return 1"));
  const std::string sha(loaded->str, loaded->len);
  freeReplyObject(loaded);
  auto evalsha = [&] {
    auto* r = static_cast<redisReply*>(redisCommand(raw, "EVALSHA %s 1 %s", sha.c_str(), "{bench:quota:floor}"));
    freeReplyObject(r);
  };

  // Warm both (connections, script caches).
  for (int i = 0; i < 1000; ++i) {
    limits.try_acquire("bench:warm", generous);
    evalsha();
  }
  std::vector<double> decision_us, floor_us, ratios;
  for (int b = 0; b < blocks; ++b) {
    std::int64_t t0 = mono_ns();
    for (int i = 0; i < per_block; ++i) limits.try_acquire("bench:hot", generous);
    const double d = double(mono_ns() - t0) / 1e3 / per_block;
    t0 = mono_ns();
    for (int i = 0; i < per_block; ++i) evalsha();
    const double f = double(mono_ns() - t0) / 1e3 / per_block;
    decision_us.push_back(d);
    floor_us.push_back(f);
    ratios.push_back(d / f);
  }
  std::printf("interleaved (%d blocks of %d calls each, alternating; medians):\n", blocks, per_block);
  std::printf("  decision %.1f us / raw EVALSHA %.1f us: block ratios p50 %.2fx (p10 %.2fx, p90 %.2fx)\n",
              bench::percentile(decision_us, 0.5), bench::percentile(floor_us, 0.5),
              bench::percentile(ratios, 0.5), bench::percentile(ratios, 0.1),
              bench::percentile(ratios, 0.9));

  // One hot key, many threads, a limit far under what they ask for.
  const weave::RateLimit hot{.permits = 5000, .per = std::chrono::seconds(1), .burst = 100};
  std::atomic<long> admitted{0}, decided{0};
  std::atomic<bool> stop{false};
  const std::int64_t start = mono_ns();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (limits.try_acquire("bench:saturated", hot).admitted) admitted.fetch_add(1, std::memory_order_relaxed);
        decided.fetch_add(1, std::memory_order_relaxed);
      }
    });
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : pool) t.join();
  const double elapsed = double(mono_ns() - start) / 1e9;
  const double bound = 5000 * elapsed + 100;
  std::printf("%d threads on one key, %.2f s: %.0f decisions/s; admitted %ld of a bound of %.0f (%.1f %%)\n", threads,
              elapsed, double(decided.load()) / elapsed, admitted.load(), bound, 100.0 * double(admitted.load()) / bound);
  redisFree(raw);
  return 0;
}
