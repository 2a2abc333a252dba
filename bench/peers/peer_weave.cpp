// Weave peer driver: the lock taken through woven [[lock]] methods (generated
// proxy, weave_generate), except "holders", which keeps 1,000 leases at once
// through LockClient (a woven method would need a thread per held lease).
// Usage: peer_weave workload=<uncontended|contended|holders|redlock> ports=P[,P,P] ...
// Prints JSON lines (see bench/peers/README.md).
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "peer_common.h"
#include "peer_service.weave.h"
#include "weave/lock.h"

using namespace std::chrono_literals;

namespace {
long long g_acq_ns = 0, g_rel_ns = 0;  // lock held / about to release (end of body)
// {all calls except INFO, calls of EVAL/EVALSHA(_RO)/FCALL: one request each}
std::pair<long long, long long> commands(redisContext* c) {  // all calls in INFO commandstats except INFO itself
  auto* r = static_cast<redisReply*>(redisCommand(c, "INFO commandstats"));
  std::string s(r->str, r->len);
  freeReplyObject(r);
  long long total = 0, scripts = 0;
  size_t p = 0;
  while ((p = s.find("cmdstat_", p)) != std::string::npos) {
    auto colon = s.find(':', p);
    std::string name = s.substr(p + 8, colon - p - 8);
    auto c2 = s.find("calls=", colon);
    const long long n = std::stoll(s.substr(c2 + 6));
    if (name != "info") total += n;
    if (name.rfind("eval", 0) == 0 || name.rfind("fcall", 0) == 0) scripts += n;
    p = colon;
  }
  return {total, scripts};
}
}  // namespace

long PeerLocked::fresh(long id) { return id + 1; }
long PeerLocked::hot(long hold_us) {
  g_acq_ns = peers::now_ns();
  std::this_thread::sleep_for(std::chrono::microseconds(hold_us));
  g_rel_ns = peers::now_ns();
  return hold_us;
}

int main(int argc, char** argv) {
  peers::Args a(argc, argv);
  const std::string wl = a.str("workload");
  const auto ports = a.ports();
  std::string url;
  if (wl == "redlock") {
    url = "redlock://";
    for (size_t i = 0; i < ports.size(); ++i) url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(ports[i]);
  } else {
    url = "redis://127.0.0.1:" + std::to_string(ports.at(0));
  }
  const long lease_ms = a.num("lease_ms", 3000), renew_ms = a.num("renew_ms", 1000);
  weave::configure_locks({.url = url, .watchdog_lease = std::chrono::milliseconds(lease_ms),
                          .renew_interval = std::chrono::milliseconds(renew_ms)});
  weave::Woven<PeerLocked> woven;
  PeerLocked& svc = woven;

  if (wl == "uncontended" || wl == "redlock") {
    const long n = a.num("n", 5000), base = a.num("base", 0);
    for (long i = 0; i < 200; ++i) svc.fresh(base - 1 - i);  // warm: connections, scripts
    peers::time_calls("weave", wl, n, [&](long i) { svc.fresh(base + i); });
  } else if (wl == "contended") {
    const long long until = peers::now_ns() + a.num("ms", 3000) * 1'000'000LL;
    const long hold_us = a.num("hold_us", 1000);
    svc.fresh(-1000 - a.num("worker", 0));  // warm (a key of its own)
    std::vector<peers::Interval> iv;
    while (peers::now_ns() < until) {
      const long long asked = peers::now_ns();
      svc.hot(hold_us);
      iv.push_back({asked, g_acq_ns, g_rel_ns});
    }
    peers::emit("weave", wl, ",\"worker\":" + a.str("worker", "0") + ",\"intervals\":" + peers::intervals(iv));
  } else if (wl == "holders") {
    const long leases = a.num("leases", 1000);
    const double secs = a.num("ms", 10000) / 1000.0;
    redisContext* c = redisConnect("127.0.0.1", ports.at(0));
    weave::LockClient locks = weave::default_lock_client();
    std::vector<weave::LeaseHandle> held;
    for (long i = 0; i < leases; ++i) held.push_back(locks.acquire("peers:hold:" + std::to_string(i)));
    const auto c0 = commands(c);
    const double cpu0 = peers::cpu_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    const double cpu = peers::cpu_seconds() - cpu0;
    const auto c1 = commands(c);
    for (auto& h : held) h.release();
    redisFree(c);
    peers::emit("weave", wl, ",\"leases\":" + std::to_string(leases) + ",\"secs\":" + std::to_string(secs) +
                                 ",\"commands\":" + std::to_string(c1.first - c0.first) +
                                 ",\"scripts\":" + std::to_string(c1.second - c0.second) + ",\"cpu_s\":" + std::to_string(cpu));
  } else {
    std::fprintf(stderr, "unknown workload %s\n", wl.c_str());
    return 2;
  }
  return 0;
}
