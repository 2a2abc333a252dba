// Redis lock backend benchmarks (run by hand, not in CI). Starts its own
// redis-server on a free loopback port and prints:
//   1. uncontended acquire + release through LockClient vs. a raw hiredis loop
//      sending the same two EVALSHAs on one connection (ratio, same run);
//   2. contended hand-off latency p50 / p99 with 8 waiters, next to PING RTT;
//   3. watchdog cost with 10,000 leases held: round trips and CPU per period.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "lock/scripts.h"
#include "redis_server.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"
#include "weave/redis.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double server_usec(redis_test::Raw& raw, const std::string& cmd) {
  std::string info = raw.cmd({"INFO", "commandstats"}).str;
  auto p = info.find("cmdstat_" + cmd + ":");
  if (p == std::string::npos) return 0;
  auto u = info.find("usec=", p);
  return std::stod(info.substr(u + 5));
}

class CountingBackend : public weave::LockBackend {
 public:
  explicit CountingBackend(std::shared_ptr<weave::LockBackend> inner) : inner_(std::move(inner)) {}
  weave::AcquireResult acquire(const weave::AcquireRequest& r) override {
    return inner_->acquire(r);
  }
  weave::ReleaseResult release(const weave::ReleaseRequest& r) override { return inner_->release(r); }
  std::vector<weave::RenewResult> renew_batch(std::span<const weave::RenewItem> items) override {
    ++batches;
    items_renewed += items.size();
    return inner_->renew_batch(items);
  }
  std::unique_ptr<weave::LockWaiter> prepare_wait(std::string_view k) override { return inner_->prepare_wait(k); }
  std::atomic<long> batches{0}, items_renewed{0};

 private:
  std::shared_ptr<weave::LockBackend> inner_;
};

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

}  // namespace

int main() {
  redis_test::RedisServer server;
  std::printf("redis-server on 127.0.0.1:%d\n\n", server.port());
  const long n = 20000;
  const int reps = 3;

  // ---- 1. uncontended acquire + release ----
  redis_test::Raw raw(server.port());
  double ping_ns = bench::ns_per_call(n, reps, [&](long) { raw.cmd({"PING"}); });

  std::string acquire_sha = raw.cmd({"SCRIPT", "LOAD", weave::lock_redis::scripts::acquire}).str;
  std::string release_sha = raw.cmd({"SCRIPT", "LOAD", weave::lock_redis::scripts::release}).str;
  redisContext* c = raw.context();
  const std::string lock = "{weave:lock:bench:raw}", fence = lock + ":fence", chan = lock + ":released";
  const std::string owner = "0f8fad5b-d9cb-469f-a165-70867728950e", ttl = "10000", grace = "10000";
  double raw_ns = bench::ns_per_call(n, reps, [&](long) {
    const char* a1[] = {"EVALSHA", acquire_sha.c_str(), "2", lock.c_str(), fence.c_str(), owner.c_str(), ttl.c_str(), "0", grace.c_str(), "1"};
    auto* r1 = static_cast<redisReply*>(redisCommandArgv(c, 10, a1, nullptr));
    freeReplyObject(r1);
    const char* a2[] = {"EVALSHA", release_sha.c_str(), "2", lock.c_str(), fence.c_str(), owner.c_str(), chan.c_str(), grace.c_str()};
    auto* r2 = static_cast<redisReply*>(redisCommandArgv(c, 8, a2, nullptr));
    freeReplyObject(r2);
  });

  weave::LockOptions o;
  o.url = server.url();
  weave::LockClient locks(o);
  locks.acquire("warm", {.ttl = 10s}).release();
  double client_ttl_ns = bench::ns_per_call(n, reps, [&](long) {
    auto h = locks.acquire("bench:client", {.ttl = 10s});
    h.release();
  });
  double client_wd_ns = bench::ns_per_call(n, reps, [&](long) {
    auto h = locks.acquire("bench:client-wd");  // watchdog mode: watch + unwatch too
    h.release();
  });
  std::printf("1. uncontended acquire + release (best of %d x %ld)\n", reps, n);
  std::printf("   PING round trip                      %8.1f us\n", ping_ns / 1e3);
  std::printf("   raw hiredis, 2 EVALSHA, 1 connection %8.1f us\n", raw_ns / 1e3);
  std::printf("   LockClient, fixed ttl                %8.1f us   ratio %.3fx\n", client_ttl_ns / 1e3,
              client_ttl_ns / raw_ns);
  std::printf("   LockClient, watchdog mode            %8.1f us   ratio %.3fx\n", client_wd_ns / 1e3,
              client_wd_ns / raw_ns);
  std::printf("   (woven [[lock]] method: see bench_redis_woven)\n\n");

  // ---- 2. contended hand-off: 8 threads (7 waiting), and 2 threads for the herd-free baseline ----
  for (int kThreads : {2, 8}) {
    const int kPerThread = 2400 / kThreads;
    std::atomic<long long> released_at{0};
    std::atomic<int> last_holder{-1};
    std::mutex m;
    std::vector<double> lat_us;
    std::vector<std::thread> ts;
    double ping_before = bench::ns_per_call(2000, 1, [&](long) { raw.cmd({"PING"}); });
    const long long scripts_before = raw.calls("evalsha");
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        std::vector<double> mine;
        for (int i = 0; i < kPerThread; ++i) {
          auto h = locks.acquire("bench:hot", {.ttl = 10s, .wait = weave::forever});
          auto now = Clock::now().time_since_epoch().count();
          long long rel = released_at.load();
          if (rel != 0 && last_holder.load() != t) mine.push_back((now - rel) / 1e3);
          last_holder = t;
          released_at = Clock::now().time_since_epoch().count();
          h.release();
        }
        std::lock_guard g(m);
        lat_us.insert(lat_us.end(), mine.begin(), mine.end());
      });
    for (auto& t : ts) t.join();
    const long long scripts = raw.calls("evalsha") - scripts_before;
    double ping_after = bench::ns_per_call(2000, 1, [&](long) { raw.cmd({"PING"}); });
    double rtt_us = std::min(ping_before, ping_after) / 1e3;
    double p50 = percentile(lat_us, 0.50), p99 = percentile(lat_us, 0.99);
    std::printf("2. contended hand-off, %d threads x %d acquisitions on one key (%zu hand-offs to another thread)\n",
                kThreads, kPerThread, lat_us.size());
    std::printf("   PING RTT %.1f us; hand-off p50 %.1f us (%.2f RTT), p99 %.1f us (%.2f RTT)\n", rtt_us, p50,
                p50 / rtt_us, p99, p99 / rtt_us);
    // Each acquisition costs 1 release + 1 winning acquire; the rest are attempts that lost.
    const double per = double(scripts) / (kThreads * kPerThread);
    std::printf("   Redis script calls per acquisition %.2f (2 = no wasted attempt)\n\n", per);
  }

  // ---- 3. watchdog cost with 10,000 leases ----
  {
    constexpr int kLeases = 10000;
    weave::LockOptions wo;
    wo.url = server.url();
    wo.watchdog_lease = 3000ms;  // renewed every 1 s
    auto counting = std::make_shared<CountingBackend>(weave::make_redis_lock_backend(wo));
    weave::LockClient wl(wo, counting);
    std::vector<weave::LeaseHandle> held;
    held.reserve(kLeases);
    for (int i = 0; i < kLeases; ++i) held.push_back(wl.acquire("bench:wd:" + std::to_string(i)));
    std::this_thread::sleep_for(1500ms);  // first renewals spread after the acquisition burst
    long b0 = counting->batches, i0 = counting->items_renewed;
    double cpu0 = cpu_seconds(), s0 = server_usec(raw, "evalsha");
    const int periods = 5;
    std::this_thread::sleep_for(periods * 1000ms);
    long b1 = counting->batches, i1 = counting->items_renewed;
    double cpu1 = cpu_seconds(), s1 = server_usec(raw, "evalsha");
    int lost = 0;
    for (auto& h : held) lost += h->lost();
    std::printf("3. watchdog: %d leases of 3 s held by one process, renew interval 1 s, over %d periods\n", kLeases,
                periods);
    std::printf("   renew_batch round trips per period %.1f; leases renewed per period %.0f; lost %d\n",
                double(b1 - b0) / periods, double(i1 - i0) / periods, lost);
    std::printf("   (leases due within half an interval are renewed together, so the batches coalesce)\n");
    std::printf("   client CPU per period %.1f ms (whole process, incl. the idle test threads)\n",
                (cpu1 - cpu0) * 1e3 / periods);
    std::printf("   redis-server script time per period %.1f ms (INFO commandstats evalsha usec)\n",
                (s1 - s0) / 1e3 / periods);
    // The backend alone: one renew_batch of all 10,000 leases.
    std::vector<std::string> keys, owners;
    std::vector<weave::RenewItem> items;
    for (auto& h : held) {
      keys.push_back(h->key());
      owners.push_back(h->owner_token());
    }
    for (int i = 0; i < kLeases; ++i) items.push_back({keys[i], owners[i], 3000ms});
    long long calls0 = raw.calls("evalsha");
    double cpu2 = cpu_seconds();
    auto t0 = Clock::now();
    auto res = counting->renew_batch(items);
    auto t1 = Clock::now();
    double cpu3 = cpu_seconds();
    long long calls1 = raw.calls("evalsha");
    long owned = std::count(res.begin(), res.end(), weave::RenewResult::owned);
    std::printf("   one renew_batch(10,000): %.1f ms wall, %.1f ms client CPU, 1 round trip, %lld script calls "
                "pipelined, %ld owned\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count(), (cpu3 - cpu2) * 1e3, calls1 - calls0,
                owned);
    held.clear();
  }
  return 0;
}
