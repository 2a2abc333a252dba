// Rate-limit decisions and semaphore permits on Redis, as ratios to a raw
// floor measured in the same run (starts its own redis-server on a free
// loopback port). Run by hand:
//   bench_quota [--blocks=<interleaved blocks, default 100>] [--threads=<N, default 16>] [--seconds=<S, default 3>]
//               [--processes=<P, default 1>] [--handoffs=<H, default 500>] [--keys=<K, default 0>]
//               [--accuracy=<A seconds, default 0> [--rate=<R/s, default 2000>] [--burst=<B, default 20>]]
//
//   decision     RateLimiter::try_acquire on one key (the GCRA script: one round trip)
//   raw_evalsha  the floor: a raw hiredis EVALSHA of a trivial script ("return 1", one key) on one connection
// measured interleaved: blocks of 100 decisions and 100 floor calls alternate, and the median of the block
// ratios is printed (robust to a load that comes and goes); then P processes (fork) of N threads each
// deciding on one hot key for S seconds: decisions a second, and admitted against the limit's bound
// (rate x elapsed + burst). Semaphores: a permit taken and given back (two
// round trips) against two floor calls, interleaved the same way; then H
// hand-offs on a key of one permit between two threads: the time from the
// holder's release() to the waiter's acquire() returning, in floor round
// trips (p50, p99). With --keys=K: one decision on each of K distinct keys
// ("api:user:<n>", from the threads), then what a FLUSHALL frees of Redis's
// used_memory, per key; the same for the names SET by hand. With
// --accuracy=A: P processes of N threads ask without pause for A seconds on
// one key limited to R a second (burst B). Each admission is known to have
// been decided between its request's sending and its answer
// (CLOCK_MONOTONIC, one clock for all processes); the most
// admissions certainly decided within one window of 1 s and of 100 ms
// (sliding: each admission's sending opens one) is set against the limit's
// bound for it, R x w + B (a client's clock cannot place an admission more
// exactly: 128 threads on 2 cores receive answers late); the quota used is
// admitted / (R x A + B).
#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench_report.h"
#include "bench_util.h"
#include "quota/scripts.h"
#include "redis_server.h"
#include "weave/quota.h"
#include "weave/rate_limit.h"
#include "weave/semaphore.h"

namespace {

using bench::mono_ns;

// Runs `work` here and in `processes - 1` fork()ed children at once; returns
// what each returned (bytes), this process's first. A child's comes back
// through a pipe, read to its end.
std::vector<std::string> in_processes(int processes, const std::function<std::string()>& work) {
  std::vector<std::pair<pid_t, int>> children;  // pid, the read end of its pipe
  for (int p = 1; p < processes; ++p) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      const std::string out = work();
      for (std::size_t done = 0; done < out.size();) {
        const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
        if (n <= 0) ::_exit(1);
        done += static_cast<std::size_t>(n);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    children.emplace_back(pid, fds[0]);
  }
  std::vector<std::string> outs{work()};
  for (auto& [pid, fd] : children) {
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    ::waitpid(pid, nullptr, 0);
    outs.push_back(std::move(out));
  }
  return outs;
}

// A trivially copyable value as bytes, and back.
template <class T>
  requires std::is_trivially_copyable_v<T>
std::string bytes_of(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
  requires std::is_trivially_copyable_v<T>
T from_bytes(const std::string& b, std::size_t at = 0) {
  T v{};
  if (b.size() >= at + sizeof v) std::memcpy(&v, b.data() + at, sizeof v);
  return v;
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
  // The decision's own script, sent by hand: what the script costs over the
  // trivial one, apart from the client.
  auto* rate_loaded = static_cast<redisReply*>(redisCommand(raw, "SCRIPT LOAD %s", weave::quota_redis::scripts::rate));
  const std::string rate_sha(rate_loaded->str, rate_loaded->len);
  freeReplyObject(rate_loaded);
  auto rate_script = [&] {
    auto* r = static_cast<redisReply*>(redisCommand(raw, "EVALSHA %s 1 %s %s %s %s %s", rate_sha.c_str(),
                                                    "{weave:quota:rate:bench:raw}", "1", "1000000000", "1", "0"));
    freeReplyObject(r);
  };
  auto evalsha = [&] {
    auto* r = static_cast<redisReply*>(redisCommand(raw, "EVALSHA %s 1 %s", sha.c_str(), "{bench:quota:floor}"));
    freeReplyObject(r);
  };

  // Warm both (connections, script caches).
  for (int i = 0; i < 1000; ++i) {
    limits.try_acquire("bench:warm", generous);
    evalsha();
  }
  std::vector<double> decision_us, floor_us, script_us, ratios, script_ratios;
  auto time_block = [&](auto&& op) {
    const std::int64_t t0 = mono_ns();
    for (int i = 0; i < per_block; ++i) op();
    return double(mono_ns() - t0) / 1e3 / per_block;
  };
  for (int b = 0; b < blocks; ++b) {
    const double d = time_block([&] { limits.try_acquire("bench:hot", generous); });
    const double f = time_block(evalsha);
    const double r = time_block(rate_script);
    decision_us.push_back(d);
    floor_us.push_back(f);
    script_us.push_back(r);
    ratios.push_back(d / f);
    script_ratios.push_back(r / f);
  }
  std::printf("interleaved (%d blocks of %d calls each, alternating; medians):\n", blocks, per_block);
  std::printf("  decision %.1f us / raw EVALSHA %.1f us: block ratios p50 %.2fx (p10 %.2fx, p90 %.2fx)\n",
              bench::percentile(decision_us, 0.5), bench::percentile(floor_us, 0.5),
              bench::percentile(ratios, 0.5), bench::percentile(ratios, 0.1),
              bench::percentile(ratios, 0.9));
  std::printf("  the decision's script by hand %.1f us / raw EVALSHA: block ratios p50 %.2fx (p10 %.2fx, p90 %.2fx)\n",
              bench::percentile(script_us, 0.5), bench::percentile(script_ratios, 0.5),
              bench::percentile(script_ratios, 0.1), bench::percentile(script_ratios, 0.9));

  // Semaphores: a permit taken and given back, against two floor calls.
  weave::Semaphore sem;
  for (int i = 0; i < 200; ++i) sem.try_acquire("bench:warm", {.permits = 4}).release();
  std::vector<double> permit_us, floor2_us, permit_ratios;
  for (int b = 0; b < blocks; ++b) {
    const double p = time_block([&] { sem.try_acquire("bench:permit", {.permits = 4}).release(); });
    const double f = time_block([&] {
      evalsha();
      evalsha();
    });
    permit_us.push_back(p);
    floor2_us.push_back(f);
    permit_ratios.push_back(p / f);
  }
  std::printf("  permit taken + given back %.1f us / 2 raw EVALSHA %.1f us: block ratios p50 %.2fx (p10 %.2fx, p90 %.2fx)\n",
              bench::percentile(permit_us, 0.5), bench::percentile(floor2_us, 0.5),
              bench::percentile(permit_ratios, 0.5), bench::percentile(permit_ratios, 0.1),
              bench::percentile(permit_ratios, 0.9));
  // Hand-offs: the holder releases, the waiter (in line, subscribed) gets it.
  const int handoffs = flag(argc, argv, "--handoffs", 500);
  std::vector<double> handoff_us, idle_floor_us;
  {
    std::atomic<std::int64_t> released_at{0};
    std::atomic<int> turn{0};  // 1: the waiter asks; 2: it holds; 3: it gives back (waits block, never spin)
    auto set = [&turn](int t) {
      turn = t;
      turn.notify_all();
    };
    auto until = [&turn](int t) {
      for (int now = turn.load(); now != t; now = turn.load()) turn.wait(now);
    };
    weave::Permit first = sem.acquire("bench:handoff", {.permits = 1});
    std::thread waiter([&] {
      for (int i = 0; i < handoffs; ++i) {
        until(1);
        weave::Permit p = sem.acquire("bench:handoff", {.permits = 1, .wait = std::chrono::seconds(10)});
        handoff_us.push_back(double(mono_ns() - released_at.load()) / 1e3);
        set(2);
        until(3);
        p.release();
      }
    });
    for (int i = 0; i < handoffs; ++i) {
      set(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the waiter is in line by now
      released_at = mono_ns();
      first.release();
      until(2);
      set(3);
      first = sem.acquire("bench:handoff", {.permits = 1, .wait = std::chrono::seconds(10)});
      // The floor in the same state: after the same pause (threads and
      // Redis idle), two raw round trips.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const std::int64_t t0 = mono_ns();
      evalsha();
      evalsha();
      idle_floor_us.push_back(double(mono_ns() - t0) / 1e3);
    }
    waiter.join();
  }
  const double rtt = bench::percentile(floor_us, 0.5);
  std::printf("  release -> waiter started (%d hand-offs): p50 %.1f us = %.2f round trips, p99 %.1f us = %.2f round "
              "trips (a round trip: raw EVALSHA p50 %.1f us)\n",
              handoffs, bench::percentile(handoff_us, 0.5), bench::percentile(handoff_us, 0.5) / rtt,
              bench::percentile(handoff_us, 0.99), bench::percentile(handoff_us, 0.99) / rtt, rtt);
  std::printf("  two raw EVALSHA after the same 2 ms pause, alternating with the hand-offs: p50 %.1f us, p99 %.1f us; "
              "hand-off / that floor: p50 %.2fx, p99 %.2fx\n",
              bench::percentile(idle_floor_us, 0.5), bench::percentile(idle_floor_us, 0.99),
              bench::percentile(handoff_us, 0.5) / bench::percentile(idle_floor_us, 0.5),
              bench::percentile(handoff_us, 0.99) / bench::percentile(idle_floor_us, 0.99));

  // One hot key, many threads (in P processes), a limit far under what they ask for.
  const weave::RateLimit hot{.permits = 5000, .per = std::chrono::seconds(1), .burst = 100};
  const int processes = flag(argc, argv, "--processes", 1);
  auto run_threads = [&] {
    weave::RateLimiter mine;  // this process's (a fork()ed child makes its own runtime)
    std::atomic<long> admitted{0}, decided{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        while (!stop.load(std::memory_order_relaxed)) {
          if (mine.try_acquire("bench:saturated", hot).admitted) admitted.fetch_add(1, std::memory_order_relaxed);
          decided.fetch_add(1, std::memory_order_relaxed);
        }
      });
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    stop = true;
    for (auto& t : pool) t.join();
    const long counts[2] = {admitted.load(), decided.load()};
    return bytes_of(counts);
  };
  const std::int64_t start = mono_ns();
  long admitted = 0, decided = 0;
  for (const std::string& out : in_processes(processes, run_threads)) {
    admitted += from_bytes<long>(out);
    decided += from_bytes<long>(out, sizeof(long));
  }
  const double elapsed = double(mono_ns() - start) / 1e9;
  const double bound = 5000 * elapsed + 100;
  std::printf("%d process(es) x %d threads on one key, %.2f s: %.0f decisions/s; admitted %ld of a bound of %.0f "
              "(%.1f %%)\n",
              processes, threads, elapsed, double(decided) / elapsed, admitted, bound,
              100.0 * double(admitted) / bound);

  // Accuracy: every admission's time, from all processes; the busiest windows.
  if (const int accuracy_s = flag(argc, argv, "--accuracy", 0); accuracy_s > 0) {
    const int rate = flag(argc, argv, "--rate", 2000), burst = flag(argc, argv, "--burst", 20);
    const weave::RateLimit limit{
        .permits = static_cast<std::uint64_t>(rate), .per = std::chrono::seconds(1), .burst = static_cast<std::uint64_t>(burst)};
    const std::string key = "bench:accuracy:" + std::to_string(::getpid());
    // An admission: when its request was sent, when its answer came.
    struct Admission {
      std::int64_t sent, answered;
      bool operator<(const Admission& o) const { return sent < o.sent; }
    };
    // Returns how many it decided, then its admissions.
    auto ask = [&] {
      weave::RateLimiter mine;  // this process's
      std::vector<std::vector<Admission>> per_thread(threads);
      std::atomic<long> decided{0};
      std::atomic<bool> stop{false};
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          while (!stop.load(std::memory_order_relaxed)) {
            const std::int64_t sent = mono_ns();
            if (mine.try_acquire(key, limit).admitted) per_thread[t].push_back({sent, mono_ns()});
            decided.fetch_add(1, std::memory_order_relaxed);
          }
        });
      std::this_thread::sleep_for(std::chrono::seconds(accuracy_s));
      stop = true;
      for (auto& t : pool) t.join();
      std::string out = bytes_of(decided.load());
      for (const auto& v : per_thread)
        out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(Admission));
      return out;
    };
    const std::int64_t from = mono_ns();
    std::vector<Admission> at;
    long decided = 0;
    for (const std::string& out : in_processes(processes, ask)) {
      decided += from_bytes<long>(out);
      for (std::size_t i = sizeof(long); i + sizeof(Admission) <= out.size(); i += sizeof(Admission))
        at.push_back(from_bytes<Admission>(out, i));
    }
    const double elapsed = double(mono_ns() - from) / 1e9;
    std::sort(at.begin(), at.end());  // by sending
    // The most admissions sent at or after one's sending and answered within
    // `window_ns` of it: decided in that window whatever the server's clock said.
    auto busiest = [&at](std::int64_t window_ns) {
      std::size_t most = 0;
      for (std::size_t i = 0; i < at.size(); ++i) {
        const std::int64_t end = at[i].sent + window_ns;
        std::size_t within = 0;
        for (std::size_t j = i; j < at.size() && at[j].sent < end; ++j) within += at[j].answered < end;
        most = std::max(most, within);
      }
      return most;
    };
    const double quota = double(rate) * elapsed + burst;
    std::printf("accuracy: %d process(es) x %d threads on one key limited to %d/s (burst %d), %.1f s: asked %.0f/s "
                "(%.1fx the rate); admitted %zu = %.2f %% of the quota\n",
                processes, threads, rate, burst, elapsed, double(decided) / elapsed,
                double(decided) / elapsed / rate, at.size(), 100.0 * double(at.size()) / quota);
    for (const auto& [label, ns] : {std::pair{"1 s", 1'000'000'000LL}, std::pair{"100 ms", 100'000'000LL}}) {
      const std::size_t most = busiest(ns);
      const double bound = double(rate) * double(ns) / 1e9 + burst;
      std::printf("  busiest %s window: %zu admitted, bound %.0f: over-admission %.0f\n", label, most, bound,
                  std::max(0.0, double(most) - bound));
    }
  }

  // Memory: K limited keys, each decided once under a limit of one an hour:
  // a key's state lasts until its theoretical arrival time (an hour on), so
  // all of them are there when measured. The floor: the same key names, each
  // SET by hand to a 16-digit integer with an hour's expiry (pipelined).
  const int keys = flag(argc, argv, "--keys", 0);
  if (keys > 0) {
    auto c = server.client();
    // used_memory less the clients' buffers (mem_clients_normal), which the
    // threads' connections grow and the server shrinks on its own schedule.
    auto used_memory = [&c] {
      const std::string info = c.cmd({"INFO", "memory"}).str;
      auto field = [&info](const std::string& tag) {
        return std::stoll(info.substr(info.find("\r\n" + tag + ":") + tag.size() + 3));
      };
      return field("used_memory") - field("mem_clients_normal");
    };
    // What the keys take: what a FLUSHALL frees.
    auto flush_frees = [&] {
      const long long before = used_memory();
      c.cmd({"FLUSHALL"});
      return before - used_memory();
    };
    c.cmd({"FLUSHALL"});
    const weave::RateLimit one_an_hour{.permits = 1, .per = std::chrono::hours(1)};
    std::atomic<int> next{0};
    std::vector<std::thread> pool;
    const std::int64_t filled_from = mono_ns();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        weave::RateLimiter mine;
        for (int i = next++; i < keys; i = next++) mine.try_acquire("api:user:" + std::to_string(i), one_an_hour);
      });
    for (auto& t : pool) t.join();
    const double fill_s = double(mono_ns() - filled_from) / 1e9;
    const long long weave_keys = c.cmd({"DBSIZE"}).integer;
    const long long weave_bytes = flush_frees();
    const std::string stored_as = "{" + weave::QuotaOptions{}.key_prefix + "rate:api:user:";  // as the store names them
    constexpr int kPipeline = 1000;
    for (int from = 0; from < keys; from += kPipeline) {
      const int to = std::min(keys, from + kPipeline);
      for (int i = from; i < to; ++i) {
        const std::string key = stored_as + std::to_string(i) + "}";
        redisAppendCommand(raw, "SET %s 1764500000000000 PX 3600000", key.c_str());
      }
      for (int i = from; i < to; ++i) {
        void* r = nullptr;
        if (redisGetReply(raw, &r) != REDIS_OK) return 1;
        freeReplyObject(r);
      }
    }
    const long long floor_keys = c.cmd({"DBSIZE"}).integer;
    const long long floor_bytes = flush_frees();
    std::printf("%d distinct limited keys (\"api:user:<n>\", stored as \"%s<n>}\", one decision each, %.1f s): "
                "%lld keys in Redis, "
                "FLUSHALL frees %.1f MB = %.0f bytes a key; the same names SET by hand to an integer with an expiry: "
                "%.0f bytes a key (%.2fx)\n",
                keys, stored_as.c_str(), fill_s, weave_keys, double(weave_bytes) / 1e6,
                double(weave_bytes) / double(weave_keys), double(floor_bytes) / double(floor_keys),
                (double(weave_bytes) / double(weave_keys)) / (double(floor_bytes) / double(floor_keys)));
  }
  redisFree(raw);
  return 0;
}
