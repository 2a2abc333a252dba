// [[dedupe]] across real processes (dedupe_worker, fork/exec) on redis://,
// redis+cluster:// and redis+sentinel:// (docs/dedupe.md, guarantees 1, 2 and 4):
// N processes x M threads with one key, a first caller SIGKILLed mid-call, a
// first caller SIGSTOPped past its claim lease (its late result not stored, its
// body told through weave::current_dedupe_claim()), and what stays in Redis
// after the window. Every behaviour is one TEST_CASE per store (the store in its
// name), each store's fixture started on first use. The body of every
// execution appends one line to a shared log file: the log, not the workers'
// word, says how many times the method ran and when.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.h"
#include "redis_server.h"
#include "sentinel_fixture.h"

using namespace std::chrono_literals;
using redis_test::Child;
using redis_test::RedisServer;
using std::chrono::milliseconds;

namespace {

const std::string kWorker = WEAVE_DEDUPE_WORKER;

long long mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A store under test: its URL, and the ports of the servers holding its data
// (every master of a cluster; the sentinels' master).
struct Store {
  std::string url;
  std::function<std::vector<int>()> data_ports;
};

Store& redis_store() {
  static RedisServer server;
  static Store s{server.url(), [] { return std::vector<int>{server.port()}; }};
  return s;
}
Store& cluster_store() {
  static Store s{cluster_test::Cluster::shared().url(), [] {
                   auto& c = cluster_test::Cluster::shared();
                   std::vector<int> ports;
                   for (std::size_t i = 0; i < c.size(); ++i) ports.push_back(c.node(i).port());
                   return ports;
                 }};
  return s;
}
Store& sentinel_store() {
  static sentinel_test::Sentinels sentinels;
  static Store s{sentinels.url(), [] { return std::vector<int>{sentinels.node(sentinels.master()).port()}; }};
  return s;
}

// A key no other case (or earlier run of the executable) uses.
std::string fresh_key(const std::string& what) {
  static int n = 0;
  return what + ":" + std::to_string(::getpid()) + ":" + std::to_string(++n);
}

// The executions' log: one line per run of the method body.
class Log {
 public:
  Log() {
    char t[] = "/tmp/weave-dedupe-log-XXXXXX";
    const int fd = ::mkstemp(t);
    if (fd < 0) throw std::runtime_error("mkstemp");
    ::close(fd);
    path_ = t;
  }
  ~Log() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }
  struct Entry {
    long long ns = 0;
    std::string pid, thread, id;
  };
  std::vector<Entry> entries() const {
    std::vector<Entry> out;
    std::ifstream in(path_);
    Entry e;
    while (in >> e.ns >> e.pid >> e.thread >> e.id) out.push_back(e);
    return out;
  }

 private:
  std::string path_;
};

// What one dedupe_worker printed.
struct Outcome {
  std::vector<std::string> lines;
  std::map<int, std::string> got;     // thread -> result id
  std::map<int, std::string> errors;  // thread -> error type
  std::map<std::string, long long> stats;
  bool done = false;
  int count(const std::string& type) const {
    int n = 0;
    for (auto& [t, e] : errors) n += e == type;
    return n;
  }
};

class Worker {
 public:
  // args: see dedupe_worker.cpp. Returns once the worker printed READY.
  Worker(const std::string& url, const std::string& key, std::vector<std::string> args) {
    args.insert(args.begin(), {kWorker, url, key});
    child_ = std::make_unique<Child>(args);
    auto ready = child_->line(30s);
    INFO("dedupe_worker: " << ready.value_or("(nothing)"));
    REQUIRE(ready == std::optional<std::string>("READY"));
  }
  Child& child() { return *child_; }
  void go() { child_->send("go"); }
  // Waits for "RUNNING <id>" (the body started); returns the id.
  std::string running(std::chrono::milliseconds timeout = 30s) {
    auto l = child_->line(timeout);
    INFO("dedupe_worker: " << l.value_or("(nothing)"));
    REQUIRE(l);
    REQUIRE(l->rfind("RUNNING ", 0) == 0);
    seen_.push_back(*l);
    return l->substr(8);
  }
  // Reads everything up to DONE, then waits for the process (exit 0).
  Outcome finish(std::chrono::milliseconds timeout = 60s) {
    Outcome o;
    o.lines = seen_;
    while (auto l = child_->line(timeout)) {
      o.lines.push_back(*l);
      std::istringstream in(*l);
      std::string word;
      in >> word;
      if (word == "GOT" || word == "ERR") {
        int t = 0;
        std::string what;
        in >> t >> what;
        (word == "GOT" ? o.got : o.errors)[t] = what;
      } else if (word == "STATS") {
        while (in >> word) {
          const auto eq = word.find('=');
          o.stats[word.substr(0, eq)] = std::stoll(word.substr(eq + 1));
        }
      } else if (word == "DONE") {
        o.done = true;
        break;
      }
    }
    std::string all;
    for (auto& l : o.lines) all += "  " + l + "\n";
    INFO("dedupe_worker printed:\n" << all);
    REQUIRE(o.done);
    REQUIRE(child_->wait() == 0);
    return o;
  }

 private:
  std::unique_ptr<Child> child_;
  std::vector<std::string> seen_;
};

std::string ms(long long n) { return std::to_string(n); }

// (a) N processes x M threads call with one key at once (a start line sent to
// all once every one is READY); the body runs 300 ms, so the others arrive
// while it runs.
void same_key(const Store& store, bool replay_and_wait) {
  constexpr int processes = 4, threads = 4;
  Log log;
  const std::string key = fresh_key(replay_and_wait ? "crowd-replay" : "crowd-throw");
  std::vector<std::string> args = {"--threads", std::to_string(threads), "--log", log.path(), "--sleep-ms", "300",
                                   "--go"};
  if (replay_and_wait) args.insert(args.end(), {"--on-duplicate", "replay", "--wait-ms", "10000"});
  std::vector<std::unique_ptr<Worker>> ws;
  for (int p = 0; p < processes; ++p) ws.push_back(std::make_unique<Worker>(store.url, key, args));
  for (auto& w : ws) w->go();
  std::vector<Outcome> outs;
  for (auto& w : ws) outs.push_back(w->finish());

  const auto runs = log.entries();
  REQUIRE(runs.size() == 1);  // the method ran once, across 16 callers in 4 processes
  int got = 0, in_flight = 0, duplicate = 0, first_calls = 0, waited = 0;
  std::set<std::string> ids;
  for (auto& o : outs) {
    got += static_cast<int>(o.got.size());
    for (auto& [t, id] : o.got) ids.insert(id);
    in_flight += o.count("DuplicateInFlight");
    duplicate += o.count("DuplicateCall");
    first_calls += static_cast<int>(o.stats["first_calls"]);
    waited += static_cast<int>(o.stats["waited"]);
    CHECK(o.got.size() + o.errors.size() == threads);  // every caller got an answer
  }
  CHECK(first_calls == 1);
  if (replay_and_wait) {
    CHECK(got == processes * threads);  // all of them got ...
    CHECK(ids == std::set<std::string>{runs[0].id});  // ... the one execution's result
    CHECK(in_flight + duplicate == 0);
    std::printf("[%s] replay + wait: %d callers, 1 execution, %d waited for it\n", store.url.c_str(), got, waited);
  } else {
    CHECK(got == 1);
    CHECK(ids == std::set<std::string>{runs[0].id});
    CHECK(in_flight + duplicate == processes * threads - 1);  // the configured answer, nothing else
    std::printf("[%s] throw: 1 execution, %d DuplicateInFlight, %d DuplicateCall\n", store.url.c_str(), in_flight,
                duplicate);
  }
}

// (b) The first caller (claim lease 500 ms, body 60 s) is SIGKILLed mid-call,
// after its claim was renewed past the lease; a duplicate that waits (wait
// 10 s, window 60 s) runs once the dead claim ran out.
// `wait_ms` is the duplicate's wait=; `probe` checks the claim outlives its
// lease before the kill (another process refused at 900 ms).
// Returns the delay from the kill to the duplicate's execution, in ms.
double killed_first_caller(const Store& store, int wait_ms = 10'000, bool probe = true) {
  Log log;
  const std::string key = fresh_key("killed");
  const std::vector<std::string> common = {"--log", log.path(), "--lease-ms", "500", "--window-ms", "60000"};
  auto args = [&](std::vector<std::string> more) {
    more.insert(more.begin(), common.begin(), common.end());
    return more;
  };
  Worker first(store.url, key, args({"--sleep-ms", "60000"}));
  const std::string first_id = first.running();
  std::this_thread::sleep_for(900ms);  // past the lease: only renewals keep the claim
  if (probe) {
    Worker early(store.url, key, args({}));
    const Outcome o = early.finish();
    CHECK(o.count("DuplicateInFlight") == 1);  // still claimed 900 ms into a 500 ms lease
  }
  const long long killed_at = mono_ns();
  first.child().signal(SIGKILL);
  CHECK(first.child().wait() == 128 + SIGKILL);

  Worker later(store.url, key, args({"--on-duplicate", "replay", "--wait-ms", std::to_string(wait_ms)}));
  const Outcome o = later.finish();
  INFO("the duplicate (wait=" << wait_ms << "ms) got: " << (o.errors.empty() ? "a result" : o.errors.begin()->second));
  const auto runs = log.entries();
  REQUIRE(runs.size() == 2);  // the killed call, then the duplicate
  CHECK(runs[0].id == first_id);
  REQUIRE(o.got.size() == 1);
  CHECK(o.got.begin()->second == runs[1].id);  // it ran: its own result, not a replay
  CHECK(runs[1].ns > killed_at);
  const double delay_ms = double(runs[1].ns - killed_at) / 1e6;
  std::printf("[%s] SIGKILLed first caller (claim lease 500 ms, window 60 s): the duplicate (wait=%d ms) ran %.0f ms "
              "after the kill\n",
              store.url.c_str(), wait_ms, delay_ms);
  return delay_ms;
}

// SIGSTOPs `first` (claim lease 500 ms) for 1.5 s, 3 leases: its claim runs
// out, and a second worker with `args` claims `key` and records its result.
// Returns that result's id (not the first's); `first` stays stopped.
std::string another_runs_while_stopped(Worker& first, const std::string& first_id, const Store& store,
                                       const std::string& key, const std::vector<std::string>& args) {
  first.child().signal(SIGSTOP);
  std::this_thread::sleep_for(1500ms);
  Worker second(store.url, key, args);
  const Outcome o2 = second.finish();
  REQUIRE(o2.got.size() == 1);
  const std::string second_id = o2.got.begin()->second;
  REQUIRE(second_id != first_id);  // the second ran
  return second_id;
}

// (c) The first caller (claim lease 500 ms) is SIGSTOPped mid-call for 1.5 s;
// a second caller claims and records its result; the first, continued,
// returns its own result to its caller, records nothing over the second's
// and counts claims_lost == 1.
Outcome stopped_first_caller(const Store& store) {
  Log log;
  const std::string key = fresh_key("stopped");
  const std::vector<std::string> args = {"--log", log.path(), "--lease-ms", "500", "--on-duplicate", "replay"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), args.begin(), args.end());
    return more;
  };
  Worker first(store.url, key, with({"--sleep-ms", "300"}));
  const std::string first_id = first.running();
  const std::string second_id = another_runs_while_stopped(first, first_id, store, key, args);

  first.child().signal(SIGCONT);
  Outcome o1 = first.finish();
  REQUIRE(o1.got.size() == 1);
  CHECK(o1.got.begin()->second == first_id);  // its caller gets its own result
  CHECK(o1.stats["claims_lost"] == 1);
  std::printf("[%s] SIGSTOPped first caller: claims_lost=%lld, errors=%lld\n", store.url.c_str(),
              o1.stats["claims_lost"], o1.stats["errors"]);

  Worker third(store.url, key, args);
  const Outcome o3 = third.finish();
  REQUIRE(o3.got.size() == 1);
  CHECK(o3.got.begin()->second == second_id);  // the record is the second's
  CHECK(log.entries().size() == 2);
  return o1;
}

// The record of `key` as stored (GET on every data server; the one holding
// it answers), or "" when none has it.
std::string record_text(const Store& store, const std::string& key) {
  const std::string k = "{weave:dedupe:" + key + "}";
  for (int port : store.data_ports()) {
    redis_test::Raw raw(port);
    try {
      auto r = raw.cmd({"GET", k});
      if (r.type == REDIS_REPLY_STRING) return r.str;
    } catch (const std::runtime_error&) {
      // MOVED: a cluster master that does not serve the key
    }
  }
  return "";
}

// (e) The first caller's body runs until it sees its claim lost (claim lease
// 500 ms; it looks every 5 ms at the std::stop_token it took when it started,
// `mode` "token", or at lost(), "poll"). SIGSTOPped for 1.5 s (3 leases), it
// loses the claim; a second process claims the key and records its result.
// Continued, the first body is told (its kept token fired, lost() and a fresh
// stop_token() say so), returns its own result to its caller, and the record
// is still the second's.
void stopped_body_is_told(const Store& store, const std::string& mode) {
  Log log;
  const std::string key = fresh_key("told-" + mode);
  const std::vector<std::string> args = {"--log", log.path(), "--lease-ms", "500", "--on-duplicate", "replay"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), args.begin(), args.end());
    return more;
  };
  Worker first(store.url, key, with({"--until-lost", mode, "--sleep-ms", "20000"}));
  const std::string first_id = first.running();
  std::this_thread::sleep_for(700ms);  // past the lease: only renewals keep the claim
  const std::string second_id = another_runs_while_stopped(first, first_id, store, key, args);
  const std::string recorded = record_text(store, key);
  CHECK(recorded.find(second_id) != std::string::npos);

  first.child().signal(SIGCONT);
  Outcome o1 = first.finish(30s);
  std::string told;
  for (auto& l : o1.lines)
    if (l.rfind("LOST " + first_id + " ", 0) == 0) told = l;
  INFO("the first body printed: " << told);
  REQUIRE_FALSE(told.empty());  // it saw the loss (not NOT-LOST after 20 s)
  CHECK(told.find(" token=1 ") != std::string::npos);        // the std::stop_token it kept fired
  CHECK(told.find(" lost=1 ") != std::string::npos);         // lost()
  CHECK(told.find(" fresh_token=1 ") != std::string::npos);  // a stop_token() asked for now
  REQUIRE(o1.got.size() == 1);
  CHECK(o1.got.begin()->second == first_id);  // its caller gets its own result
  CHECK(o1.stats["claims_lost"] == 1);
  CHECK(o1.stats["errors"] == 0);

  CHECK(record_text(store, key) == recorded);  // its late result was not stored over the second's
  Worker third(store.url, key, args);
  const Outcome o3 = third.finish();
  REQUIRE(o3.got.size() == 1);
  CHECK(o3.got.begin()->second == second_id);
  CHECK(log.entries().size() == 2);
  std::printf("[%s] SIGSTOPped first caller (%s): %s\n", store.url.c_str(), mode.c_str(), told.c_str());
}

// Keys matching `pattern` on every data server of the store (SCAN: keys past
// their expiry are not returned).
std::vector<std::string> keys_matching(const Store& store, const std::string& pattern) {
  std::vector<std::string> out;
  for (int port : store.data_ports()) {
    redis_test::Raw raw(port);
    std::string cursor = "0";
    do {
      auto r = raw.cmd({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      cursor = r.elements.at(0).str;
      for (auto& k : r.elements.at(1).elements) out.push_back(k.str);
    } while (cursor != "0");
  }
  return out;
}

// (d) A finished call (window 300 ms) with 3 duplicates, and a call SIGKILLed
// mid-call (claim lease 500 ms): after the window plus the claim lease no key
// of either remains.
void nothing_left(const Store& store) {
  const std::string marker = fresh_key("left");
  const std::string done_key = marker + ":done-call", killed_key = marker + ":killed-call";
  constexpr long long window = 300, lease = 500;
  Worker killed(store.url, killed_key, {"--lease-ms", ms(lease), "--sleep-ms", "60000", "--window-ms", ms(window)});
  killed.running();
  Worker done(store.url, done_key,
              {"--threads", "4", "--lease-ms", ms(lease), "--window-ms", ms(window), "--on-duplicate", "replay",
               "--wait-ms", "5000", "--sleep-ms", "100"});
  const Outcome o = done.finish();
  CHECK(o.got.size() == 4);
  std::this_thread::sleep_for(300ms);  // the killed caller's claim was renewed at least once
  CHECK(keys_matching(store, "*" + killed_key + "*").size() == 1);
  killed.child().signal(SIGKILL);
  killed.child().wait();
  std::this_thread::sleep_for(milliseconds(window + lease + 50));
  const auto left = keys_matching(store, "*" + marker + "*");
  std::string names;
  for (auto& k : left) names += k + " ";
  INFO("left behind: " << names);
  CHECK(left.empty());
}

}  // namespace

#define DEDUPE_PROCESS_CASES(NAME, STORE)                                                                            \
  TEST_CASE("dedupe processes on " NAME ": 4 processes x 4 threads with one key run it once, the others refused",   \
            "[dedupe][redis][processes]") {                                                                          \
    same_key(STORE(), false);                                                                                        \
  }                                                                                                                  \
  TEST_CASE("dedupe processes on " NAME ": 4 processes x 4 threads with one key, replay + wait: one run, one result", \
            "[dedupe][redis][processes]") {                                                                          \
    same_key(STORE(), true);                                                                                         \
  }                                                                                                                  \
  TEST_CASE("dedupe processes on " NAME ": a SIGKILLed first caller blocks its key for the claim lease, not the window", \
            "[dedupe][redis][processes]") {                                                                          \
    killed_first_caller(STORE());                                                                                    \
  }                                                                                                                  \
  TEST_CASE("dedupe processes on " NAME ": a SIGSTOPped first caller's late result is not stored over the next one's", \
            "[dedupe][redis][processes]") {                                                                          \
    stopped_first_caller(STORE());                                                                                   \
  }                                                                                                                  \
  TEST_CASE("dedupe processes on " NAME ": a SIGSTOPped first caller's body is told its claim is lost, through the " \
            "stop token it kept and through lost()",                                                                \
            "[dedupe][redis][processes]") {                                                                          \
    stopped_body_is_told(STORE(), "token");                                                                          \
    stopped_body_is_told(STORE(), "poll");                                                                           \
  }                                                                                                                  \
  TEST_CASE("dedupe processes on " NAME ": no key of the calls remains after the window plus the claim lease",      \
            "[dedupe][redis][processes]") {                                                                          \
    nothing_left(STORE());                                                                                           \
  }                                                                                                                  \
  /* A claim found in its last millisecond (PTTL 0) once read as "ttl unknown", and the duplicate slept */   \
  /* until wait= ran out. The bound tells the lease (500 ms) from the wait (20 s) with a wide margin.    */   \
  TEST_CASE("dedupe processes on " NAME ": 4 times, a duplicate waiting on a SIGKILLed caller's 500 ms claim runs long before its wait ends", \
            "[dedupe][redis][processes]") {                                                                          \
    for (int round = 0; round < 4; ++round) {                                                                        \
      INFO("round " << round);                                                                                       \
      CHECK(killed_first_caller(STORE(), 20'000, false) < 10'000);                                                   \
    }                                                                                                                \
  }

DEDUPE_PROCESS_CASES("redis://", redis_store)
DEDUPE_PROCESS_CASES("redis+cluster://", cluster_store)
DEDUPE_PROCESS_CASES("redis+sentinel://", sentinel_store)

// On a server of its own: not one key in the whole database (DBSIZE counts
// keys past their expiry until Redis reclaims them: polled up to 2 s).
TEST_CASE("dedupe processes on redis://: DBSIZE is 0 after the window plus the claim lease",
          "[dedupe][redis][processes]") {
  RedisServer server;
  Store store{server.url(), [&] { return std::vector<int>{server.port()}; }};
  nothing_left(store);
  auto raw = server.client();
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (raw.cmd({"DBSIZE"}).integer != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  CHECK(raw.cmd({"DBSIZE"}).integer == 0);
}

// A claim lost while SIGSTOPped is counted as claims_lost, not as a store
// error (DedupeStats::errors is "store failures after the method ran").
TEST_CASE("dedupe processes on redis://: a claim lost while SIGSTOPped is not also counted as a store error",
          "[dedupe][redis][processes]") {
  Outcome first = stopped_first_caller(redis_store());
  CHECK(first.stats["claims_lost"] == 1);
  CHECK(first.stats["errors"] == 0);
}
