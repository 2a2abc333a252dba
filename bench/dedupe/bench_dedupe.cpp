// [[dedupe]] on Redis, as ratios to raw hiredis floors measured in the same
// run (Google Benchmark like bench_proxy; starts its own
// redis-server on a free loopback port). Run by hand:
//   bench_dedupe [--benchmark_* flags] [--blocks=<interleaved blocks, default 100>]
//                [--rounds=<waiting rounds, default 300>] [--duplicates=<N, default 8>]
//
//   first_call      the uncontended guarded call: a fresh key each time, on_duplicate=replay, so the
//                   claim script, the method, then the finish script (result stored as JSON for the window)
//   raw_claim_store the floor: a raw hiredis SET <key> <running> NX PX <lease>, then SET <key> <result> PX
//                   <window>, on one connection (two round trips, no Lua, no result encoding)
//   raw_scripts     the same claim and finish scripts (src/dedupe/scripts/) sent by hand with EVALSHA on
//                   one connection: what the scripts cost over plain SETs, apart from the client
//   replay          a duplicate answered with the stored result: the claim script finds the record,
//                   the JSON is decoded into a shop::Receipt
//   raw_get         the floor: a raw hiredis GET of the same record key on one connection
// then the same two ratios measured interleaved (blocks of 100 guarded calls and 100 floor operations
// alternating, the median of the block ratios: robust to a load that comes and goes), and, after them,
// N concurrent duplicates (threads, on_duplicate=replay, wait=10s) waiting on one
// in-flight call: for each round, the time from the first call's return to the last duplicate's
// return, p50 / p99 in loopback round trips (PING, timed in the same run).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dedupe/scripts.h"
#include "dedupe_methods.h"
#include "bench_report.h"
#include "bench_util.h"
#include "redis_server.h"
#include "weave/dedupe.h"

using namespace std::chrono_literals;

namespace {

using bench::mono_ns;

redis_test::RedisServer* g_server = nullptr;

using weave::AnnotationSpec;
using weave::ArgSpec;
using weave::ArgValue;

// [[dedupe(key=<key>, window=60s, on_duplicate=replay)]], and the same with wait=10s.
constexpr ArgSpec k_replay_args[] = {{"key", ArgValue::of_template(0)},
                                     {"match", ArgValue::of_template(1)},
                                     {"window", ArgValue::of_duration_ms(60'000)},
                                     {"on_duplicate", ArgValue::of_enum("replay", 2)}};
constexpr AnnotationSpec k_replay[] = {{"dedupe", 0, k_replay_args, 1, 1}};
constexpr ArgSpec k_wait_args[] = {{"key", ArgValue::of_template(0)},
                                   {"match", ArgValue::of_template(1)},
                                   {"window", ArgValue::of_duration_ms(60'000)},
                                   {"on_duplicate", ArgValue::of_enum("replay", 2)},
                                   {"wait", ArgValue::of_duration_ms(10'000)}};
constexpr AnnotationSpec k_wait[] = {{"dedupe", 0, k_wait_args, 1, 1}};
constexpr weave::MethodInfo k_replay_info{"shop::Payments::pay", "payments.h", 1, k_replay, {},
                                          &dedupe_test::k_receipt_codec};
constexpr weave::MethodInfo k_wait_info{"shop::Payments::pay", "payments.h", 2, k_wait, {},
                                        &dedupe_test::k_receipt_codec};

template <class Body>
shop::Receipt pay(const weave::MethodInfo& info, const std::string& key, Body body) {
  const std::string rendered[2] = {key, ""};
  return weave::detail::invoke<shop::Receipt>(info, {}, rendered, body, weave::detail::CannotSkip{});
}

shop::Receipt receipt() { return shop::Receipt{"r-1", 100}; }

void first_call(benchmark::State& state) {
  static long n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(pay(k_replay_info, "first:" + std::to_string(++n), receipt));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(first_call)->UseRealTime();

// The same two steps by hand: a claim that exists only if absent, then the outcome.
const std::string k_running = "r|0|0123456789abcdef0123456789abcdef:17";
const std::string& done_record() {
  static const std::string done = "d|0|" + nlohmann::json(receipt()).dump();
  return done;
}
bool raw_claim_store_once(redisContext* c, const std::string& k) {
  const std::string& done = done_record();
  const char* set_nx[] = {"SET", k.c_str(), k_running.c_str(), "NX", "PX", "10000"};
  const std::size_t set_nx_len[] = {3, k.size(), k_running.size(), 2, 2, 5};
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, 6, set_nx, set_nx_len));
  const bool ok = r && r->type == REDIS_REPLY_STATUS;
  freeReplyObject(r);
  const char* set[] = {"SET", k.c_str(), done.c_str(), "PX", "60000"};
  const std::size_t set_len[] = {3, k.size(), done.size(), 2, 5};
  r = static_cast<redisReply*>(redisCommandArgv(c, 5, set, set_len));
  benchmark::DoNotOptimize(r);
  freeReplyObject(r);
  return ok;
}
void raw_get_once(redisContext* c, const std::string& k) {
  const char* argv[] = {"GET", k.c_str()};
  const std::size_t lens[] = {3, k.size()};
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, 2, argv, lens));
  benchmark::DoNotOptimize(r);
  freeReplyObject(r);
}

void raw_claim_store(benchmark::State& state) {
  static long n = 0;
  redis_test::Raw raw(g_server->port());
  for (auto _ : state)
    if (!raw_claim_store_once(raw.context(), "{weave:dedupe:raw:" + std::to_string(++n) + "}"))
      state.SkipWithError("SET NX PX failed");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(raw_claim_store)->UseRealTime();

// The interceptor's two scripts by hand: EVALSHA claim, EVALSHA finish (with its PUBLISH).
void raw_scripts(benchmark::State& state) {
  static long n = 0;
  redis_test::Raw raw(g_server->port());
  namespace scripts = weave::dedupe_redis::scripts;
  const std::string claim = raw.cmd({"SCRIPT", "LOAD", scripts::claim}).str;
  const std::string finish = raw.cmd({"SCRIPT", "LOAD", scripts::finish}).str;
  const std::string running = "r|0|0123456789abcdef0123456789abcdef:17";
  const std::string done = "d|0|" + nlohmann::json(receipt()).dump();
  for (auto _ : state) {
    const std::string k = "{weave:dedupe:rawlua:" + std::to_string(++n) + "}", at = k + ":at", channel = k + ":done";
    const char* c[] = {"EVALSHA", claim.c_str(), "1", k.c_str(), running.c_str(), "10000"};
    const std::size_t cl[] = {7, claim.size(), 1, k.size(), running.size(), 5};
    auto* r = static_cast<redisReply*>(redisCommandArgv(raw.context(), 6, c, cl));
    if (!r || r->type != REDIS_REPLY_ARRAY) state.SkipWithError("claim failed");
    freeReplyObject(r);
    const char* f[] = {"EVALSHA", finish.c_str(), "2", k.c_str(), at.c_str(), running.c_str(), done.c_str(), "60000",
                       channel.c_str()};
    const std::size_t fl[] = {7, finish.size(), 1, k.size(), at.size(), running.size(), done.size(), 5, channel.size()};
    r = static_cast<redisReply*>(redisCommandArgv(raw.context(), 9, f, fl));
    if (!r || r->type != REDIS_REPLY_INTEGER || r->integer != 1) state.SkipWithError("finish failed");
    freeReplyObject(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(raw_scripts)->UseRealTime();

void replay(benchmark::State& state) {
  pay(k_replay_info, "replayed", receipt);  // the first call, recorded
  for (auto _ : state)
    benchmark::DoNotOptimize(pay(k_replay_info, "replayed", [&]() -> shop::Receipt {
      state.SkipWithError("the duplicate ran");
      return {};
    }));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(replay)->UseRealTime();

void raw_get(benchmark::State& state) {
  redis_test::Raw raw(g_server->port());
  const std::string k = "{weave:dedupe:replayed}";
  if (raw.cmd({"GET", k}).nil()) state.SkipWithError("replay must run first (it records the key)");
  for (auto _ : state) raw_get_once(raw.context(), k);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(raw_get)->UseRealTime();


// The same pairs measured interleaved: blocks of `per_block` guarded calls
// and `per_block` floor operations alternate, so a load that comes and goes
// (a shared machine) weighs on both sides of each ratio alike. Each block
// gives one ratio; the median of the block ratios is printed.
void interleaved(int blocks, int per_block) {
  redis_test::Raw raw(g_server->port());
  auto time_block = [&](auto&& op) {
    const std::int64_t t0 = mono_ns();
    for (int i = 0; i < per_block; ++i) op(i);
    return double(mono_ns() - t0) / 1e3 / per_block;
  };
  static long n = 0;
  std::vector<double> first_us, floor_us, replay_us, get_us, first_ratio, replay_ratio;
  const std::string replayed = "{weave:dedupe:replayed}";
  for (int b = 0; b < blocks; ++b) {
    first_us.push_back(time_block([&](int) {
      benchmark::DoNotOptimize(pay(k_replay_info, "ifirst:" + std::to_string(++n), receipt));
    }));
    floor_us.push_back(time_block([&](int) {
      raw_claim_store_once(raw.context(), "{weave:dedupe:iraw:" + std::to_string(++n) + "}");
    }));
    replay_us.push_back(time_block([&](int) {
      benchmark::DoNotOptimize(pay(k_replay_info, "replayed", [] { return shop::Receipt{"the duplicate ran", 0}; }));
    }));
    get_us.push_back(time_block([&](int) { raw_get_once(raw.context(), replayed); }));
    first_ratio.push_back(first_us.back() / floor_us.back());
    replay_ratio.push_back(replay_us.back() / get_us.back());
  }
  auto med = [](const std::vector<double>& v) { return bench::percentile(v, 0.5); };
  std::printf("\ninterleaved (%d blocks of %d calls each, alternating; medians):\n", blocks, per_block);
  std::printf("  first call %.1f us / raw SET NX PX + SET %.1f us: block ratios p50 %.2fx (p10 %.2fx, p90 %.2fx)\n",
              med(first_us), med(floor_us), med(first_ratio), bench::percentile(first_ratio, 0.1),
              bench::percentile(first_ratio, 0.9));
  std::printf("  replayed duplicate %.1f us / raw GET %.1f us: block ratios p50 %.2fx (p10 %.2fx, p90 %.2fx)\n",
              med(replay_us), med(get_us), med(replay_ratio), bench::percentile(replay_ratio, 0.1),
              bench::percentile(replay_ratio, 0.9));
}

// One round: the first call claims a fresh key; its body starts N duplicate
// threads, waits until each has entered its call, then 5 ms more (they have
// claimed, found the running claim and wait on its channel), and returns.
// Result: the last duplicate's return - the first call's return, in us.
double waiting_round(int round, int duplicates) {
  const std::string key = "wait:" + std::to_string(round);
  std::atomic<int> calling{0};
  std::atomic<bool> go{false};
  std::vector<std::int64_t> returned(duplicates, 0);
  std::vector<std::string> ids(duplicates);
  std::vector<std::thread> ts;
  for (int i = 0; i < duplicates; ++i)
    ts.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      calling.fetch_add(1);
      const shop::Receipt r = pay(k_wait_info, key, [] { return shop::Receipt{"duplicate ran", 0}; });
      returned[i] = mono_ns();
      ids[i] = r.id;
    });
  pay(k_wait_info, key, [&] {
    go.store(true);
    while (calling.load() < duplicates) std::this_thread::yield();
    std::this_thread::sleep_for(5ms);
    return shop::Receipt{"first", 1};
  });
  const std::int64_t first_returned = mono_ns();
  for (auto& t : ts) t.join();
  for (auto& id : ids)
    if (id != "first") throw std::runtime_error("a waiting duplicate got '" + id + "', not the first call's result");
  return double(*std::max_element(returned.begin(), returned.end()) - first_returned) / 1e3;
}

void waiting_duplicates(int rounds, int duplicates) {
  redis_test::Raw raw(g_server->port());
  std::vector<double> ping_us;
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t t0 = mono_ns();
    raw.cmd({"PING"});
    ping_us.push_back(double(mono_ns() - t0) / 1e3);
  }
  std::vector<double> delay_us;
  for (int i = 0; i < rounds; ++i) delay_us.push_back(waiting_round(i, duplicates));
  const double rtt = bench::percentile(ping_us, 0.5);
  const double p50 = bench::percentile(delay_us, 0.5), p99 = bench::percentile(delay_us, 0.99);
  std::printf("\n%d duplicates waiting on one in-flight call (threads, wait=10s, pool_size %d), %d rounds:\n",
              duplicates, weave::DedupeOptions{}.pool_size, rounds);
  std::printf("  PING RTT p50 %.1f us, p99 %.1f us\n", rtt, bench::percentile(ping_us, 0.99));
  std::printf("  first call returns -> last duplicate returns: p50 %.1f us (%.2f RTT), p99 %.1f us (%.2f RTT), "
              "max %.1f us\n",
              p50, p50 / rtt, p99, p99 / rtt, bench::percentile(delay_us, 1.0));
  const weave::DedupeStats s = weave::dedupe_stats();
  std::printf("  dedupe_stats: first_calls=%llu duplicates=%llu replays=%llu waited=%llu in_flight_refused=%llu\n",
              (unsigned long long)s.first_calls, (unsigned long long)s.duplicates, (unsigned long long)s.replays,
              (unsigned long long)s.waited, (unsigned long long)s.in_flight_refused);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 300, duplicates = 8, blocks = 100, per_block = 100;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::atoi(argv[i] + 9);
    else if (std::strncmp(argv[i], "--duplicates=", 13) == 0) duplicates = std::atoi(argv[i] + 13);
    else if (std::strncmp(argv[i], "--blocks=", 9) == 0) blocks = std::atoi(argv[i] + 9);
    else args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  redis_test::RedisServer server;
  g_server = &server;
  std::printf("redis-server on 127.0.0.1:%d\n", server.port());
  weave::configure_dedupe({.url = server.url()});

  bench::RunCollector collect;
  benchmark::RunSpecifiedBenchmarks(&collect);
  auto ns = [&](const std::string& name) { return collect.ns(name); };
  std::printf("\nratios (same run, benchmarks one after the other: a load that changes in between moves them; the "
              "interleaved ratios below do not):\n");
  if (ns("first_call/real_time") > 0 && ns("raw_claim_store/real_time") > 0)
    std::printf("  first call %.1f us; / raw SET NX PX + SET %.1f us = %.2fx (target <= 1.2x)\n",
                ns("first_call/real_time") / 1e3, ns("raw_claim_store/real_time") / 1e3,
                ns("first_call/real_time") / ns("raw_claim_store/real_time"));
  if (ns("first_call/real_time") > 0 && ns("raw_scripts/real_time") > 0)
    std::printf("  first call / the same two scripts by hand (EVALSHA x2) %.1f us = %.2fx; scripts / SETs %.2fx\n",
                ns("raw_scripts/real_time") / 1e3, ns("first_call/real_time") / ns("raw_scripts/real_time"),
                ns("raw_scripts/real_time") / ns("raw_claim_store/real_time"));
  if (ns("replay/real_time") > 0 && ns("raw_get/real_time") > 0)
    std::printf("  replayed duplicate %.1f us; / raw GET %.1f us = %.2fx (target <= 1.2x)\n",
                ns("replay/real_time") / 1e3, ns("raw_get/real_time") / 1e3,
                ns("replay/real_time") / ns("raw_get/real_time"));
  if (blocks > 0) {
    pay(k_replay_info, "replayed", receipt);  // recorded (when the replay benchmark did not run)
    interleaved(blocks, per_block);
  }
  if (rounds > 0 && duplicates > 0) waiting_duplicates(rounds, duplicates);
  benchmark::Shutdown();
  return 0;
}
