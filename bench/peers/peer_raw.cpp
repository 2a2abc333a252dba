// Raw hiredis floor: the same two scripts Weave sends (acquire EVALSHA, release
// EVALSHA; renew = one batched EVALSHA per period), no library, blocking
// hiredis on one connection per master. Contended waiters spin on acquire with
// no sleep (the floor for hand-off latency, not a sane client).
// Usage: peer_raw workload=<uncontended|contended|holders|redlock> ports=P[,P,P] ...
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "peer_common.h"
#include "lock/scripts.h"

namespace {
std::string kOwner = "0f8fad5b-d9cb-469f-a165-7086772895";  // + worker id: one owner per process

redisReply* run(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (auto& s : args) argv.push_back(s.data()), lens.push_back(s.size());
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, (int)argv.size(), argv.data(), lens.data()));
  if (!r) { std::fprintf(stderr, "redis: %s\n", c->errstr); std::exit(1); }
  return r;
}
void append(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (auto& s : args) argv.push_back(s.data()), lens.push_back(s.size());
  redisAppendCommandArgv(c, (int)argv.size(), argv.data(), lens.data());
}
std::string load(redisContext* c, const char* script) {
  auto* r = run(c, {"SCRIPT", "LOAD", script});
  std::string s(r->str, r->len);
  freeReplyObject(r);
  return s;
}
// {all calls except INFO, calls of EVAL/EVALSHA(_RO)/FCALL: one request each}
std::pair<long long, long long> commands(redisContext* c) {
  auto* r = run(c, {"INFO", "commandstats"});
  std::string s(r->str, r->len);
  freeReplyObject(r);
  long long total = 0, scripts = 0;
  size_t p = 0;
  while ((p = s.find("cmdstat_", p)) != std::string::npos) {
    auto colon = s.find(':', p);
    const std::string name = s.substr(p + 8, colon - p - 8);
    const long long n = std::stoll(s.substr(s.find("calls=", colon) + 6));
    if (name != "info") total += n;
    if (name.rfind("eval", 0) == 0 || name.rfind("fcall", 0) == 0) scripts += n;
    p = colon;
  }
  return {total, scripts};
}
}  // namespace

int main(int argc, char** argv) {
  peers::Args a(argc, argv);
  kOwner += a.str("worker", "0");
  const std::string wl = a.str("workload");
  std::vector<redisContext*> cs;
  for (int port : a.ports()) cs.push_back(redisConnect("127.0.0.1", port));
  std::vector<std::string> acq, rel, ren;
  for (auto* c : cs) acq.push_back(load(c, weave::lock_redis::scripts::acquire)), rel.push_back(load(c, weave::lock_redis::scripts::release)),
      ren.push_back(load(c, weave::lock_redis::scripts::renew));
  // ARGV as scripts.h documents them: owner, lease, no place in line, grace,
  // clock floor (on for one node, off for the redlock workload).
  const std::string ttl = "10000", grace = "10000", floor = wl == "redlock" ? "0" : "1";
  auto acquire = [&](size_t i, const std::string& key) {
    append(cs[i], {"EVALSHA", acq[i], "2", key, key + ":fence", kOwner, ttl, "0", grace, floor});
  };
  auto release = [&](size_t i, const std::string& key) {
    append(cs[i], {"EVALSHA", rel[i], "2", key, key + ":fence", kOwner, key + ":released", grace});
  };
  auto flush_all = [&] {  // send to every master before waiting on any reply
    for (auto* c : cs)
      for (int done = 0; !done;)
        if (redisBufferWrite(c, &done) != REDIS_OK) std::exit(1);
  };
  auto reply_ok = [&](size_t i) {  // acquire reply {1, token} or release reply 1
    redisReply* r = nullptr;
    redisGetReply(cs[i], reinterpret_cast<void**>(&r));
    bool ok = r && ((r->type == REDIS_REPLY_ARRAY && r->element[0]->integer == 1) || (r->type == REDIS_REPLY_INTEGER && r->integer == 1));
    freeReplyObject(r);
    return ok;
  };

  if (wl == "uncontended" || wl == "redlock") {
    // redlock: the same pair sent to every master at once (append to all, then read all).
    const long n = a.num("n", 5000), base = a.num("base", 0);
    auto once = [&](long id) {
      const std::string key = "{peers:raw:" + std::to_string(id) + "}";
      for (size_t i = 0; i < cs.size(); ++i) acquire(i, key);
      flush_all();
      for (size_t i = 0; i < cs.size(); ++i) reply_ok(i);
      for (size_t i = 0; i < cs.size(); ++i) release(i, key);
      flush_all();
      for (size_t i = 0; i < cs.size(); ++i) reply_ok(i);
    };
    for (long i = 0; i < 200; ++i) once(base - 1 - i);
    peers::time_calls("raw", wl, n, [&](long i) { once(base + i); });
  } else if (wl == "contended") {
    const long long until = peers::now_ns() + a.num("ms", 3000) * 1'000'000LL;
    const long hold_us = a.num("hold_us", 1000);
    const std::string key = "{peers:raw:hot}";
    std::vector<peers::Interval> iv;
    long long asked = peers::now_ns();
    while (peers::now_ns() < until) {
      acquire(0, key);
      if (!reply_ok(0)) continue;
      const long long t = peers::now_ns();
      std::this_thread::sleep_for(std::chrono::microseconds(hold_us));
      iv.push_back({asked, t, peers::now_ns()});
      release(0, key);
      reply_ok(0);
      asked = peers::now_ns();
    }
    peers::emit("raw", wl, ",\"worker\":" + a.str("worker", "0") + ",\"intervals\":" + peers::intervals(iv));
  } else if (wl == "holders") {
    const long leases = a.num("leases", 1000);
    const long lease_ms = a.num("lease_ms", 3000), renew_ms = a.num("renew_ms", 1000);
    const long long until_ms = a.num("ms", 10000);
    std::vector<std::string> keys;
    for (long i = 0; i < leases; ++i) {
      keys.push_back("{peers:raw:hold:" + std::to_string(i) + "}");
      acquire(0, keys.back());
    }
    for (long i = 0; i < leases; ++i) reply_ok(0);
    std::vector<std::string> renew{"EVALSHA", ren[0], std::to_string(2 * leases)};
    for (auto& k : keys) renew.push_back(k), renew.push_back(k + ":fence");
    renew.push_back(grace);
    for (long i = 0; i < leases; ++i) renew.push_back(kOwner), renew.push_back(std::to_string(lease_ms));
    const auto c0 = commands(cs[0]);
    const double cpu0 = peers::cpu_seconds();
    const long long start = peers::now_ns();
    for (long k = 1; k * renew_ms <= until_ms; ++k) {
      const long long due = start + k * renew_ms * 1'000'000LL;
      std::this_thread::sleep_for(std::chrono::nanoseconds(due - peers::now_ns()));
      freeReplyObject(run(cs[0], renew));
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(start + until_ms * 1'000'000LL - peers::now_ns()));
    const double cpu = peers::cpu_seconds() - cpu0;
    const auto c1 = commands(cs[0]);
    for (auto& k : keys) release(0, k);
    for (long i = 0; i < leases; ++i) reply_ok(0);
    peers::emit("raw", wl, ",\"leases\":" + std::to_string(leases) + ",\"secs\":" + std::to_string(until_ms / 1000.0) +
                               ",\"commands\":" + std::to_string(c1.first - c0.first) +
                               ",\"scripts\":" + std::to_string(c1.second - c0.second) + ",\"cpu_s\":" + std::to_string(cpu));
  } else {
    return 2;
  }
  for (auto* c : cs) redisFree(c);
  return 0;
}
