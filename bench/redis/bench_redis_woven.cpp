// Uncontended acquire + release through a woven [[lock]] method on the redis
// backend vs. LockClient directly vs. a raw hiredis loop sending the same two
// EVALSHAs on one connection (same run). Starts its own redis-server.
#include <cstdio>

#include "bench_util.h"
#include "lock/scripts.h"
#include "redis_server.h"
#include "redis_service.weave.h"
#include "weave/lock.h"

using namespace std::chrono_literals;

long RedisLocked::locked(long x) { return x + 1; }
long RedisLocked::plain(long x) { return x + 1; }

int main() {
  redis_test::RedisServer server;
  const long n = 20000;
  const int reps = 3;
  redis_test::Raw raw(server.port());
  std::string acquire_sha = raw.cmd({"SCRIPT", "LOAD", weave::lock_redis::scripts::acquire}).str;
  std::string release_sha = raw.cmd({"SCRIPT", "LOAD", weave::lock_redis::scripts::release}).str;
  redisContext* c = raw.context();
  const std::string lock = "{weave:lock:bench:raw}", fence = lock + ":fence", chan = lock + ":released";
  const std::string owner = "0f8fad5b-d9cb-469f-a165-70867728950e", ttl = "10000", grace = "10000";
  auto raw_loop = [&](long) {
    const char* a1[] = {"EVALSHA", acquire_sha.c_str(), "2", lock.c_str(), fence.c_str(), owner.c_str(), ttl.c_str(), "0", grace.c_str(), "1"};
    freeReplyObject(redisCommandArgv(c, 10, a1, nullptr));
    const char* a2[] = {"EVALSHA", release_sha.c_str(), "2", lock.c_str(), fence.c_str(), owner.c_str(), chan.c_str(), grace.c_str()};
    freeReplyObject(redisCommandArgv(c, 8, a2, nullptr));
  };

  weave::configure_locks({.url = server.url()});
  weave::LockClient locks = weave::default_lock_client();
  weave::Woven<RedisLocked> woven;
  RedisLocked& svc = woven;
  svc.locked(0);  // warm: connections, scripts

  // Interleave the three loops twice and keep the best of each.
  double r = 1e300, l = 1e300, w = 1e300;
  for (int round = 0; round < 2; ++round) {
    r = std::min(r, bench::ns_per_call(n, reps, raw_loop));
    l = std::min(l, bench::ns_per_call(n, reps, [&](long) { locks.acquire("bench:client", {.ttl = 10s}).release(); }));
    w = std::min(w, bench::ns_per_call(n, reps, [&](long i) { bench::keep(svc.locked(i)); }));
  }
  std::printf("uncontended acquire + release on redis (best of %d x %ld, 2 rounds)\n", reps, n);
  std::printf("  raw hiredis, 2 EVALSHA, 1 connection  %8.1f us\n", r / 1e3);
  std::printf("  LockClient acquire + release          %8.1f us   ratio %.3fx\n", l / 1e3, l / r);
  std::printf("  woven [[lock]] method                 %8.1f us   ratio %.3fx\n", w / 1e3, w / r);
  return 0;
}
