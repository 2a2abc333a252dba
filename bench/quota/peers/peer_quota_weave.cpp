// The C++ side of bench/quota/peers: Weave's RateLimiter and Semaphore on a
// redis-server the orchestrator started, and the floor every ratio is taken
// against (a raw hiredis EVALSHA of `return 1`, no library).
//
//   peer_quota_weave workload=<floor|rate-latency|rate-accuracy|sem-cycle|sem-handoff> port=P
//                    [key=K] [n=N] [calls=C] [ms=MS] [start=NS|stdin] [worker=W]
//                    [rate=R] [burst=B] [interval_us=U] [permits=P] [hold_us=H]
//
// One JSON line on stdout (bench/quota/peers/README.md); every time is
// CLOCK_MONOTONIC in ns, the clock the orchestrator and the Node driver read.
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "peer_common.h"  // bench/peers: key=value args, now_ns, JSON lines
#include "weave/quota.h"
#include "weave/rate_limit.h"
#include "weave/semaphore.h"

namespace {

using namespace std::chrono_literals;

// start=stdin: say "ready" (warmed up) and read the start time the
// orchestrator hands every worker at once; start=NS: that time; none: now.
long long start_time(const peers::Args& a) {
  const std::string s = a.str("start", "0");
  if (s != "stdin") return std::stoll(s);
  std::printf("ready\n");
  std::fflush(stdout);
  long long t = 0;
  if (std::scanf("%lld", &t) != 1) std::exit(3);
  return t;
}

void sleep_until_ns(long long t) {
  const long long d = t - peers::now_ns();
  if (d > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d));
}

std::string num(long long v) { return std::to_string(v); }

// n rounds of `calls` EVALSHA of a trivial script, one connection.
int floor_run(const peers::Args& a, int port) {
  redisContext* c = redisConnect("127.0.0.1", port);
  if (!c || c->err) {
    std::fprintf(stderr, "floor: cannot connect to %d\n", port);
    return 1;
  }
  auto* loaded = static_cast<redisReply*>(redisCommand(c, "SCRIPT LOAD %s", "return 1"));
  if (!loaded || loaded->type != REDIS_REPLY_STRING) return 1;
  const std::string sha(loaded->str, loaded->len);
  freeReplyObject(loaded);
  const std::string key = a.str("key", "quota-peers:floor");
  const long calls = a.num("calls", 1);
  auto round = [&] {
    for (long k = 0; k < calls; ++k) {
      auto* r = static_cast<redisReply*>(redisCommand(c, "EVALSHA %s 1 %s", sha.c_str(), key.c_str()));
      if (!r || r->type != REDIS_REPLY_INTEGER) {
        std::fprintf(stderr, "floor: bad reply\n");
        std::exit(1);
      }
      freeReplyObject(r);
    }
  };
  for (int i = 0; i < 200; ++i) round();
  peers::time_calls("floor", a.str("workload"), a.num("n", 5000), [&](long) { round(); });
  redisFree(c);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const peers::Args a(argc, argv);
  const std::string wl = a.str("workload");
  const int port = static_cast<int>(a.num("port", 6379));
  if (wl == "floor") return floor_run(a, port);

  weave::configure_quota({.url = "redis://127.0.0.1:" + std::to_string(port)});
  const std::string key = a.str("key", "quota-peers:" + wl);
  const std::string worker = a.str("worker", "0");
  const long long ms = a.num("ms", 10000);

  if (wl == "rate-latency") {
    weave::RateLimiter limits;
    // Far above anything one client can ask for: every call is admitted.
    const weave::RateLimit generous{.permits = 1'000'000'000, .per = 1s};
    for (int i = 0; i < 200; ++i) limits.try_acquire(key + ":warm", generous);
    long refused = 0;
    std::vector<long long> lat;
    const long n = a.num("n", 5000);
    lat.reserve(static_cast<size_t>(n));
    const long long t0 = peers::now_ns();
    for (long i = 0; i < n; ++i) {
      const long long s = peers::now_ns();
      const bool ok = limits.try_acquire(key, generous).admitted;
      lat.push_back(peers::now_ns() - s);
      refused += ok ? 0 : 1;
    }
    const long long t1 = peers::now_ns();
    peers::emit("weave", wl, ",\"n\":" + num(n) + ",\"secs\":" + std::to_string((t1 - t0) / 1e9) +
                                 ",\"refused\":" + num(refused) + ",\"lat_ns\":" + peers::list(lat));
  } else if (wl == "rate-accuracy") {
    weave::RateLimiter limits;
    const weave::RateLimit limit{.permits = static_cast<std::uint64_t>(a.num("rate", 200)), .per = 1s,
                                 .burst = static_cast<std::uint64_t>(a.num("burst", 20))};
    limits.try_acquire(key + ":warm:" + worker, limit);  // connections, script
    const long long interval = a.num("interval_us", 4000) * 1000LL;
    const long long start = start_time(a);
    sleep_until_ns(start);
    const long long t_start = peers::now_ns(), end = (start ? start : t_start) + ms * 1'000'000LL;
    std::vector<long long> admitted;  // call start, call end: the server decided in between
    long calls = 0;
    // Paced at random (Poisson arrivals, one call per `interval` on average,
    // so the workers fall into no lockstep with each other or the limit); a
    // late call goes at once, but never more than one interval is made up.
    std::mt19937_64 rng(std::random_device{}());
    std::exponential_distribution<double> gap(1.0 / double(interval));
    for (long long next = t_start + static_cast<long long>(gap(rng)); next < end;) {
      sleep_until_ns(next);
      const long long s = peers::now_ns();
      const bool ok = limits.try_acquire(key, limit).admitted;
      const long long e = peers::now_ns();
      ++calls;
      if (ok) admitted.insert(admitted.end(), {s, e});
      next += static_cast<long long>(gap(rng));
      if (next < e - interval) next = e;
    }
    peers::emit("weave", wl, ",\"worker\":" + worker + ",\"calls\":" + num(calls) + ",\"start_ns\":" + num(t_start) +
                                 ",\"end_ns\":" + num(peers::now_ns()) + ",\"admitted_ns\":" + peers::list(admitted));  // flat: s0,e0,s1,e1,...
  } else if (wl == "sem-cycle") {
    weave::Semaphore sem;
    const weave::SemaphoreSpec one{.permits = 1};
    for (int i = 0; i < 200; ++i) sem.acquire(key + ":warm", one).release();
    const long n = a.num("n", 5000);
    std::vector<long long> lat, acq;  // per cycle: acquire + release, acquire alone
    const long long t0 = peers::now_ns();
    for (long i = 0; i < n; ++i) {
      const long long s = peers::now_ns();
      weave::Permit p = sem.acquire(key, one);
      acq.push_back(peers::now_ns() - s);
      p.release();
      lat.push_back(peers::now_ns() - s);
    }
    const long long t1 = peers::now_ns();
    peers::emit("weave", wl, ",\"n\":" + num(n) + ",\"secs\":" + std::to_string((t1 - t0) / 1e9) +
                                 ",\"lat_ns\":" + peers::list(lat) + ",\"acquire_ns\":" + peers::list(acq));
  } else if (wl == "sem-handoff") {
    weave::Semaphore sem;
    const weave::SemaphoreSpec spec{.permits = static_cast<std::uint32_t>(a.num("permits", 2)), .wait = 120s};
    sem.acquire(key + ":warm:" + worker, spec).release();
    const long hold_us = a.num("hold_us", 2000);
    const long long start = start_time(a);
    sleep_until_ns(start);
    const long long end = (start ? start : peers::now_ns()) + ms * 1'000'000LL;
    std::vector<long long> iv;  // per grant: acquired, about to release, asked, released
    while (peers::now_ns() < end) {
      const long long asked = peers::now_ns();
      weave::Permit p = sem.acquire(key, spec);
      const long long acquired = peers::now_ns();
      std::this_thread::sleep_for(std::chrono::microseconds(hold_us));
      const long long releasing = peers::now_ns();
      p.release();
      iv.insert(iv.end(), {acquired, releasing, asked, peers::now_ns()});
    }
    peers::emit("weave", wl, ",\"worker\":" + worker + ",\"intervals\":" + peers::list(iv));  // flat, 4 per grant
  } else {
    std::fprintf(stderr, "unknown workload %s\n", wl.c_str());
    return 2;
  }
  return 0;
}
