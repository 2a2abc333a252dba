// Resharding end to end: `redis-cli --cluster reshard` moves
// slots back and forth between the three masters of a cluster of its own
// while three reshard_worker processes take [[lock]]s, read, write and evict
// through [[cache]] and call a [[dedupe]] method, on keys placed in the moving
// slots and in slots that stay. Nothing may reach a caller as an error (no
// cache store error counted either) but on a slot Redis itself left split
// until the test repaired it (Cluster::repair_slot_views()), the locked read-modify-writes stay
// exact, and each dedupe key's body runs once with every duplicate given its
// result. The workers run 20 s (300 s in test_cluster_reshard_soak, label
// soak); WEAVE_RESHARD_SECONDS overrides either.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.h"
#include "store/cluster_executor.h"

using namespace std::chrono_literals;
using cluster_test::Cluster;
using Clock = std::chrono::steady_clock;

namespace {

int run_seconds(int fallback) {
  if (const char* e = std::getenv("WEAVE_RESHARD_SECONDS")) return std::max(1, std::atoi(e));
  return fallback;
}

long long mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Slots moved per reshard: each master's lowest ones (redis-cli takes a
// source's slots from its lowest up).
constexpr unsigned kMove = 128;
constexpr unsigned kBStart = 5461, kCStart = 10923;  // redis-cli --cluster create's ranges for 3 masters

// 0: among A's moving slots, 1: among B's, 2: C's range (never moves), -1: elsewhere.
int range_of(unsigned slot) {
  if (slot < kMove) return 0;
  if (slot >= kBStart && slot < kBStart + kMove) return 1;
  if (slot >= kCStart) return 2;
  return -1;
}

// `count` names stem<j> whose Redis key (redis_key(name)) falls in the
// ranges 0, 1, 2 in turn.
template <class RedisKey>
std::vector<std::string> place(const std::string& stem, std::size_t count, RedisKey redis_key) {
  std::vector<std::string> out;
  int want = 0;
  for (long j = 0; out.size() < count; ++j) {
    std::string name = stem + std::to_string(j);
    if (range_of(weave::store::key_slot(redis_key(name))) != want) continue;
    out.push_back(std::move(name));
    want = (want + 1) % 3;
  }
  return out;
}

struct WorkerResult {
  std::map<std::string, long> counts;
  std::vector<std::pair<std::string, std::string>> got;  // (dedupe key, result id)
  std::vector<std::string> errors, other;
  std::string stats;
  bool done = false;
};

void reshard_under_load(const int seconds) {
  constexpr int kWorkers = 3, kThreads = 3, kPeriodMs = 25;
  Cluster c;  // its own: the topology changes
  const std::size_t a = c.owner(0), b = c.owner(kBStart), cc = c.owner(kCStart);
  REQUIRE(std::set<std::size_t>{a, b, cc}.size() == 3);
  REQUIRE(c.owner(kBStart - 1) == a);
  REQUIRE(c.owner(kCStart - 1) == b);

  char tmpl[] = "/tmp/weave-reshard-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;

  // The cache's prefix puts its invalidation channel ("{<prefix>}invalidations")
  // in A's moving slots: the feed stays subscribed (classic Pub/Sub) on the
  // node that gives them away, while the writers' scripts follow their keys.
  std::string prefix;
  for (int j = 0; prefix.empty(); ++j)
    if (range_of(weave::store::key_slot("rs" + std::to_string(j) + ":")) == 0) prefix = "rs" + std::to_string(j) + ":";
  const auto counters = place("ctr", 12, [](const std::string& n) { return "{weave:lock:job:" + n + "}"; });
  const auto cache_keys = place("item", 24, [&](const std::string& n) { return "{" + prefix + "reshard:" + n + "}"; });
  const std::size_t periods = static_cast<std::size_t>(seconds) * 1000 / kPeriodMs + 40;
  const auto dedupe_keys = place("pay", periods, [](const std::string& n) { return "{weave:dedupe:" + n + "}"; });
  const std::string keys_file = dir + "/keys";
  {
    std::ofstream k(keys_file);
    k << "prefix " << prefix << '\n';
    for (auto& n : counters) k << "counter " << n << '\n';
    for (auto& n : cache_keys) k << "cache " << n << '\n';
    for (auto& n : dedupe_keys) k << "dedupe " << n << '\n';
  }

  std::vector<std::unique_ptr<redis_test::Child>> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.push_back(std::make_unique<redis_test::Child>(
        std::vector<std::string>{WEAVE_RESHARD_WORKER, c.url(), dir, keys_file, std::to_string(kThreads),
                                 std::to_string(kPeriodMs)}));
  }
  for (auto& w : workers) REQUIRE(w->line(30s) == std::optional<std::string>("READY"));
  const long long go = mono_ns() + 200'000'000;
  for (auto& w : workers) w->send("go " + std::to_string(go));
  const auto planned_end = Clock::now() + 200ms + std::chrono::seconds(seconds);

  // Back and forth, each pair ending where it began: A->B->A, B->C->B, A->C->A.
  const std::vector<std::pair<std::size_t, std::size_t>> cycle = {{a, b}, {b, a}, {b, cc}, {cc, b}, {a, cc}, {cc, a}};
  int moves = 0, repairs = 0;
  std::set<long long> repaired;  // slots whose views the test set (the cluster's own split)
  std::vector<std::string> reshard_failures;
  const auto reshard_start = Clock::now();
  // Until the planned end, and at least one whole cycle: on a loaded machine
  // a move can take seconds (the workers run until told to stop).
  const auto at_most = planned_end + 100s;
  for (std::size_t i = 0; (Clock::now() + 500ms < planned_end || (moves < 6 && Clock::now() < at_most)) &&
                          reshard_failures.empty();
       ++i) {
    const auto [from, to] = cycle[i % cycle.size()];
    std::vector<std::string> out;
    int rc = 0;
    // redis-cli refuses to start ("Nodes don't agree about configuration!")
    // while gossip still carries the previous move to a node: a precondition
    // of the tool, not what this test is about; it goes again once they agree.
    for (int attempt = 0; attempt < 5; ++attempt) {
      redis_test::Child cli({"/usr/bin/redis-cli", "--cluster", "reshard", c.name(a), "--cluster-from", c.id(from),
                             "--cluster-to", c.id(to), "--cluster-slots", std::to_string(kMove), "--cluster-yes"});
      out = cli.lines_until_eof(120s);
      rc = cli.wait();
      try {
        c.wait_ok();
      } catch (const std::runtime_error& e) {
        // Seen under load after a slot moved away and back: one node keeps
        // the slot's middle owner (Cluster::repair_slot_views()). Not what
        // this test is about: the test repairs the views, says so, and goes
        // on; what the callers saw meanwhile still counts.
        std::string told = std::string(e.what()) + "\nafter redis-cli exit " + std::to_string(rc) + ":";
        for (std::size_t l = out.size() > 5 ? out.size() - 5 : 0; l < out.size(); ++l) told += "\n  " + out[l];
        const std::vector<long long> slots = c.repair_slot_views();
        repaired.insert(slots.begin(), slots.end());
        WARN(told << "\nrepaired: " << slots.size() << " slot(s) set to their majority owner");
        ++repairs;
        c.wait_ok();
      }
      const bool disagreed = std::any_of(out.begin(), out.end(), [](const std::string& l) {
        return l.find("don't agree about configuration") != std::string::npos;
      });
      if (!(rc != 0 && disagreed)) break;
      std::this_thread::sleep_for(200ms);
    }
    const unsigned lowest = from == a || to == a ? 0 : kBStart;
    // redis-cli ends each slot's move with SETSLOT NODE on its two nodes; the
    // others learn it by gossip, and the nodes may agree on the old map for
    // a moment (seen once in 30 moves): the new owner is waited for.
    const std::size_t target = to;  // (clang++ 14 captures no structured binding)
    const auto moved = [&] { return c.owner(lowest) == target && c.owner(lowest + kMove - 1) == target; };
    for (const auto until = Clock::now() + 10s; rc == 0 && !moved() && Clock::now() < until;)
      std::this_thread::sleep_for(50ms);
    if (rc != 0 || !moved()) {
      std::string why = "reshard " + c.name(from) + " -> " + c.name(to) + " exit " + std::to_string(rc) + ":";
      for (std::size_t l = out.size() > 5 ? out.size() - 5 : 0; l < out.size(); ++l) why += "\n  " + out[l];
      reshard_failures.push_back(why);
    }
    ++moves;
  }
  const auto reshard_time = Clock::now() - reshard_start;
  for (auto& w : workers) w->send("stop");
  const auto stop = Clock::now();

  std::vector<WorkerResult> results(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    WorkerResult& r = results[static_cast<std::size_t>(w)];
    const auto deadline = stop + 120s;
    while (!r.done && Clock::now() < deadline) {
      const auto line = workers[static_cast<std::size_t>(w)]->line(std::chrono::duration_cast<std::chrono::milliseconds>(
          std::max(Clock::duration(1ms), deadline - Clock::now())));
      if (!line) break;
      std::istringstream in(*line);
      std::string kind;
      in >> kind;
      if (kind == "COUNT") {
        std::string counter;
        long n = 0;
        in >> counter >> n;
        r.counts[counter] += n;
      } else if (kind == "GOT") {
        std::string key, id;
        in >> key >> id;
        r.got.emplace_back(key, id);
      } else if (kind == "ERR" || kind == "ERROR") {
        r.errors.push_back(*line);
      } else if (kind == "STATS") {
        r.stats = *line;
      } else if (kind == "DONE") {
        r.done = true;
      } else {
        r.other.push_back(*line);
      }
    }
    CHECK(workers[static_cast<std::size_t>(w)]->wait() == 0);
  }

  // Requests met slots in the middle of a migration (ASK, answered after ASKING).
  long long asking = 0;
  for (std::size_t n = 0; n < c.size(); ++n) asking += c.node(n).client().calls("asking");
  WARN("moves " << moves << " of " << kMove << " slots in "
                << std::chrono::duration_cast<std::chrono::milliseconds>(reshard_time).count() << " ms, ASKING "
                << asking << ", cluster repairs " << repairs);

  for (auto& f : reshard_failures) FAIL_CHECK(f);
  CHECK(moves >= 6);  // at least one whole cycle
  CHECK(asking > 0);
  long ops = 0;
  for (auto& r : results) {
    INFO(r.stats);
    CHECK(r.done);
    // Until the test repaired it, a split slot has no node serving it (its two
    // claimed owners send its callers to each other): such a call ends, after
    // its command timeout, with the typed error naming the redirect. Reported;
    // every other error fails.
    long split = 0;
    for (auto& e : r.errors) {
      if (e.find("still redirected") != std::string::npos &&
          std::any_of(repaired.begin(), repaired.end(), [&](long long slot) {
            return e.find("MOVED " + std::to_string(slot) + " ") != std::string::npos;
          })) {
        WARN("on a split slot: " << e);
        ++split;
      } else {
        FAIL_CHECK(e);
      }
    }
    for (auto& o : r.other) FAIL_CHECK("unexpected line: " << o);
    CHECK(r.stats.find(" errors=" + std::to_string(split) + " ") != std::string::npos);
    if (repaired.empty()) {
      CHECK(r.stats.find(" cache_errors=0 ") != std::string::npos);
      CHECK(r.stats.find(" dedupe_errors=0 ") != std::string::npos);
    } else if (r.stats.find(" cache_errors=0 ") == std::string::npos ||
               r.stats.find(" dedupe_errors=0 ") == std::string::npos) {
      WARN("store errors counted while a slot was split: " << r.stats);  // the counters do not say which slot
    }
    const auto at = r.stats.find("ops=");
    if (at != std::string::npos) ops += std::stol(r.stats.substr(at + 4));
  }
  CHECK(ops > 0);

  // Every locked read-modify-write counted: each file holds the sum of the
  // increments the processes made.
  long total = 0;
  for (auto& counter : counters) {
    long expected = 0;
    for (auto& r : results) expected += r.counts.count(counter) ? r.counts.at(counter) : 0;
    std::ifstream in(dir + "/" + counter);
    long value = 0;
    in >> value;
    INFO(counter);
    CHECK(value == expected);
    total += expected;
  }
  CHECK(total > 0);

  // Each dedupe key ran once, and every call got that run's result.
  std::map<std::string, std::vector<std::string>> runs;
  {
    std::ifstream in(dir + "/dedupe.log");
    std::string key, id;
    while (in >> key >> id) runs[key].push_back(id);
  }
  std::size_t calls = 0;
  for (auto& r : results)
    for (auto& [key, id] : r.got) {
      ++calls;
      INFO(key);
      REQUIRE(runs.count(key) == 1);
      CHECK(runs[key].size() == 1);
      CHECK(id == runs[key].front());
    }
  CHECK(calls > runs.size());  // there were duplicates
  for (auto& [key, ids] : runs) {
    INFO(key);
    CHECK(ids.size() == 1);
  }
  WARN("ops " << ops << ", increments " << total << ", dedupe keys " << runs.size() << ", dedupe calls " << calls);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace

// test_cluster_reshard_soak (label soak) runs it with WEAVE_RESHARD_SECONDS=300.
TEST_CASE("cluster: redis-cli resharding under 3 processes of locks, cache and dedupe reaches no caller as an error",
          "[cluster][reshard]") {
  reshard_under_load(run_seconds(20));
}
