// Asynchronous [[lock]] against the synchronous woven call, in one run
// (docs/benchmarks.md, "Asynchronous methods"):
//  1. uncontended latency, call by call: a synchronous woven call from a
//     plain thread vs the asynchronous one awaited by a coroutine on a
//     one-thread io_context, p50 and p99, alternating rounds, on redis://
//     (its own redis-server) and on mem://; with, for scale, an asynchronous
//     call under a no-op asynchronous interceptor (the chain's own cost), a
//     bare co_spawn (asio's), and a co_spawn with the least a call needs for
//     its guarantees: its own cancellation slot and its context installed at
//     each resumption (the floor under any asynchronous woven call), and on
//     mem:// that floor plus the lock's own work done through LockClient
//     (the least an asynchronous [[lock]] call can cost);
//  2. contended: N coroutines on one key on an io_context run by 4 threads,
//     each holding the lock across a 100 us suspension, with a 1 ms
//     heartbeat timer on the same io_context (rearmed after each beat): its
//     lag p50/p99/max (the max: the start, where every coroutine's first
//     step is queued ahead of the first beat), the
//     process's threads, acquisitions per second.
//   bench_async_lock [calls=5000] [rounds=4] [coroutines=2000] [mem|redis]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "async_accounts.weave.h"
#include "redis_server.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"
#include "weave/lock.h"
#include "weave/woven.h"

namespace net = weave::net;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

// Microseconds per call, one sample per call.
std::vector<double> sync_round(Accounts& svc, int n) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(n));
  const std::string id = "u";
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    svc.add_sync(id);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return us;
}

// Microseconds per awaited call(executor, i), one after another, from a
// coroutine on a one-thread io_context.
template <class Call>
std::vector<double> coroutine_round(int n, Call call) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(n));
  net::io_context io;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        const net::any_io_executor ex = co_await net::this_coro::executor;
        for (int i = 0; i < n; ++i) {
          const auto t0 = Clock::now();
          co_await call(ex, i);
          us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
      },
      net::detached);
  io.run();
  return us;
}

std::vector<double> async_round(Accounts& svc, int n) {
  return coroutine_round(n, [&svc](const net::any_io_executor&, int) { return svc.add("u"); });
}

// The same call under one asynchronous interceptor that only proceeds: what
// the chain costs without the lock's work.
std::vector<double> noop_round(Accounts& svc, int n) {
  return coroutine_round(n, [&svc](const net::any_io_executor&, int) { return svc.touch("u"); });
}

net::awaitable<long> returns_at_once(long x) { co_return x + 1; }

// The floor under any call that runs on an executor of its own: awaiting a
// co_spawn of a coroutine that returns at once (asio completes it through a
// post, to avoid recursion). An asynchronous woven call is one such spawn.
std::vector<double> spawn_round(int n) {
  return coroutine_round(n, [](const net::any_io_executor& ex, int i) {
    return net::co_spawn(ex, returns_at_once(i), net::use_awaitable);
  });
}

// The least any call needs to meet guarantees 2 and 4 (docs/async.md): a
// cancellation of its own (a co_spawn bound to its own signal) and its
// context at every resumption (an executor that installs it around each
// handler it runs; held by plain pointer, the least: Weave's adds a
// generation check). What that costs before the call does anything is the
// floor under an asynchronous woven call.
thread_local const void* installed_context = nullptr;

template <class Inner>
class InstallingExecutor {
 public:
  InstallingExecutor(Inner inner, const int* context) noexcept : inner_(std::move(inner)), context_(context) {}
  template <class F>
  void execute(F&& f) const {
    inner_.execute([f = std::forward<F>(f), context = context_]() mutable {
      const void* saved = std::exchange(installed_context, context);
      std::move(f)();
      installed_context = saved;
    });
  }
  friend bool operator==(const InstallingExecutor& a, const InstallingExecutor& b) noexcept {
    return a.inner_ == b.inner_ && a.context_ == b.context_;
  }
  friend bool operator!=(const InstallingExecutor& a, const InstallingExecutor& b) noexcept { return !(a == b); }
  template <class Property>
  auto query(const Property& p) const -> decltype(net::query(std::declval<const Inner&>(), p)) {
    return net::query(inner_, p);
  }
  template <class Property>
  auto require(const Property& p) const
      -> InstallingExecutor<std::decay_t<decltype(net::require(std::declval<const Inner&>(), p))>> {
    return {net::require(inner_, p), context_};
  }
  template <class Property>
  auto prefer(const Property& p) const
      -> InstallingExecutor<std::decay_t<decltype(net::prefer(std::declval<const Inner&>(), p))>> {
    return {net::prefer(inner_, p), context_};
  }

 private:
  Inner inner_;
  const int* context_;
};

// Awaits `body` as a coroutine of its own, bound to a cancellation signal of
// its own, on an executor that installs a context around each handler.
net::awaitable<long> own_call(net::any_io_executor outer, net::awaitable<long> body, int i) {
  net::cancellation_signal own;
  const int context = i;  // (outlives the call's handlers: none is left behind)
  const net::any_io_executor ex =
      InstallingExecutor<net::io_context::executor_type>(*outer.target<net::io_context::executor_type>(), &context);
  auto bound = net::bind_cancellation_slot(own.slot(), net::use_awaitable);
  auto spawned = net::co_spawn(ex, std::move(body), bound);  // (named: g++ 12 destroys a co_await expression's temporaries twice)
  co_return co_await std::move(spawned);
}

std::vector<double> own_call_round(int n) {
  return coroutine_round(n, [](const net::any_io_executor& ex, int i) { return own_call(ex, returns_at_once(i), i); });
}

// The floor plus what the lock itself must do, written with Weave's
// LockClient instead of the chain: take the key, hold the lease in the
// call's context while the method (a coroutine of its own, as the woven
// method is) runs, give it back (mem:// only: a Redis client's round trips
// would block the io thread here).
net::awaitable<long> locked_body(weave::LockClient& locks, int i) {
  weave::LeaseHandle lease = locks.try_acquire("bench:floor:u");
  weave::LeaseScope in_context(lease);
  auto method = returns_at_once(i);  // (named, as in own_call)
  co_return co_await std::move(method);
}

std::vector<double> own_locked_call_round(weave::LockClient& locks, int n) {
  return coroutine_round(
      n, [&locks](const net::any_io_executor& ex, int i) { return own_call(ex, locked_body(locks, i), i); });
}

struct Row {
  const char* name;
  std::function<std::vector<double>(int)> round;
  std::vector<double> all;
};

void uncontended(const char* store, Accounts& svc, int n, int rounds, weave::LockClient* floor_locks) {
  std::vector<Row> rows = {
      {"synchronous woven call  ", [&svc](int k) { return sync_round(svc, k); }, {}},
      {"asynchronous woven call ", [&svc](int k) { return async_round(svc, k); }, {}},
      {"async, no-op interceptor", [&svc](int k) { return noop_round(svc, k); }, {}},
      {"asio floor: co_spawn    ", spawn_round, {}},
      {"+ own slot and context  ", own_call_round, {}},
  };
  if (floor_locks)
    rows.push_back({"+ the lock's own work   ", [floor_locks](int k) { return own_locked_call_round(*floor_locks, k); }, {}});
  sync_round(svc, n / 10);  // warm: connections, scripts, pools
  async_round(svc, n / 10);
  for (int r = 0; r < rounds; ++r)  // alternating: every side sees the same load
    for (Row& row : rows) {
      std::vector<double> us = row.round(n);
      row.all.insert(row.all.end(), us.begin(), us.end());
    }
  const double sync_p50 = percentile(rows[0].all, 0.5);
  std::printf("%-9s uncontended, %d x %d calls each\n", store, rounds, n);
  for (const Row& row : rows) {
    const double p50 = percentile(row.all, 0.5);
    std::printf("  %s p50 %8.3f us  p99 %8.3f us", row.name, p50, percentile(row.all, 0.99));
    if (&row != &rows[0]) std::printf("   p50 ratio %.2fx", p50 / sync_p50);
    std::printf("\n");
  }
}

void contended(const char* store, Accounts& svc, int coroutines) {
  net::io_context io;
  std::atomic<int> done{0};
  const int threads_before = process_threads();
  std::atomic<int> most_threads{threads_before};
  std::vector<double> lag_us;
  std::atomic<bool> running{true};
  // 1 ms heartbeat on the same io_context.
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        const auto ex = co_await net::this_coro::executor;
        net::steady_timer t(ex);
        while (running) {
          // Rearmed 1 ms after each beat, as a heartbeat is: a stall delays
          // one beat (by its length), and the max shows the longest.
          const auto due = Clock::now() + std::chrono::milliseconds(1);
          t.expires_at(due);
          co_await t.async_wait(net::use_awaitable);
          lag_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - due).count());
          most_threads = std::max(most_threads.load(), process_threads());
        }
      },
      net::detached);
  const auto t0 = Clock::now();
  for (int i = 0; i < coroutines; ++i)
    net::co_spawn(io, svc.hold("c", 100), [&](std::exception_ptr e, long) {
      if (!e && ++done == coroutines) running = false;
    });
  std::vector<std::thread> pool;
  for (int i = 0; i < 3; ++i) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("%-9s contended: %d coroutines on one key, each holding it across 100 us, 4 io threads\n", store,
              coroutines);
  std::printf("  %d acquisitions in %.2f s (%.0f/s); threads %d -> at most %d\n", done.load(), secs, done / secs,
              threads_before, most_threads.load());
  std::printf("  1 ms heartbeat lag  p50 %.0f us  p99 %.0f us  max %.0f us (%zu beats)\n", percentile(lag_us, 0.5),
              percentile(lag_us, 0.99), percentile(lag_us, 1.0), lag_us.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 4;
  const int coroutines = argc > 3 ? std::atoi(argv[3]) : 2000;
  const std::string only = argc > 4 ? argv[4] : "";  // "mem" or "redis": that store alone (for a profile)
  weave::add_async_interceptor(weave::InterceptorRegistry::global(), "noop",
                               [](weave::AsyncInvocation& inv) { return inv.proceed(); });
  if (only != "mem") {
    redis_test::RedisServer server;
    weave::configure_locks({.url = server.url()});
    weave::Woven<Accounts> svc;
    uncontended("redis://", svc, n, rounds, nullptr);
    contended("redis://", svc, coroutines);
    weave::configure_locks({});
  }
  if (only == "redis") return 0;
  weave::configure_locks({.url = "mem://"});
  weave::Woven<Accounts> svc;
  weave::LockClient floor_locks(weave::LockOptions{.url = "mem://"});
  uncontended("mem://", svc, n * 10, rounds, &floor_locks);
  contended("mem://", svc, coroutines);
  return 0;
}
