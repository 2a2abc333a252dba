// [[scheduled]] across real processes on redis://, redis+cluster:// and
// redis+sentinel:// (docs/scheduled.md):
// tick_worker processes (ticker.h: every 250 ms) serve one schedule, some
// under a wall clock 5 minutes off (faketime), while the test restarts
// redis-server from its AOF, SIGKILLs or SIGSTOPs a worker in the middle of
// a run. The oracle is the workers' logs and the schedule's record in the
// store: no tick starts twice, every tick slot ran or was counted missed,
// and a run cut short is taken over as the next attempt of the same tick.
// A cron schedule in a zone whose clocks change runs on mem:// in a
// tick_worker whose clock (libfaketime) starts just before the change
// (redis-server's jemalloc does not start under libfaketime).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.h"
#include "faketime.h"
#include "queue/queue_runtime.h"
#include "redis_server.h"
#include "sentinel_fixture.h"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr long long kPeriod = 250;  // ticker.h
constexpr auto kLease = 1000ms;     // the workers' delivery lease (tick_worker's default)

std::string temp_dir() {
  std::string dir = (fs::temp_directory_path() / "weave-scheduled-XXXXXX").string();
  REQUIRE(::mkdtemp(dir.data()));
  return dir;
}

// tick_worker serving `url`, logging to `log`; under a wall clock `skew`
// off ("-5m": libfaketime preloaded, so a SIGKILL reaches the worker
// itself) unless empty; its first attempts working `slow_ms`.
pid_t spawn_worker(const std::string& url, const std::string& log, const std::string& skew, int slow_ms = 0) {
  std::string args[] = {"tick_worker", url, log, std::to_string(slow_ms)};
  char* argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(), nullptr};
  const SkewedEnvironment skewed(skew);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!skew.empty()) skewed.exec(WEAVE_TICK_WORKER, argv);
    ::execv(WEAVE_TICK_WORKER, argv);
    ::_exit(127);
  }
  return pid;
}

void kill_all(std::vector<pid_t>& pids) {
  for (pid_t p : pids) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
  }
  pids.clear();
}

struct Line {
  char kind = 0;  // S E L
  long long tick = 0;
  int attempt = 0;
  unsigned long long token = 0;
  pid_t pid = 0;
  long long clock = 0;  // S: the worker's system clock (ms)
};

std::vector<Line> read_log(const std::string& path) {
  std::vector<Line> out;
  std::ifstream in(path);
  for (std::string text; std::getline(in, text);) {
    std::istringstream s(text);
    Line l;
    s >> l.kind >> l.tick >> l.attempt;
    if (l.kind == 'S')
      s >> l.token >> l.pid >> l.clock;
    else
      s >> l.pid;
    if (s) out.push_back(l);
  }
  return out;
}

// The first line `match` accepts, waiting up to `within` for it.
template <class Match>
std::optional<Line> wait_for_line(const std::string& log, Match&& match, std::chrono::milliseconds within = 5s) {
  const auto until = std::chrono::steady_clock::now() + within;
  do {
    for (const Line& l : read_log(log))
      if (match(l)) return l;
    std::this_thread::sleep_for(10ms);
  } while (std::chrono::steady_clock::now() < until);
  return std::nullopt;
}

weave::detail::QueueTicks stored(const std::string& url) {
  weave::QueueOptions o;
  o.url = url;
  weave::detail::QueueRuntime rt(o);
  return rt.state("schedule/ticker")->store().ticks("ticker");
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

long long ms_at(const std::string& iso_utc) {  // "2026-10-25 01:00:00"
  std::tm tm{};
  std::istringstream(iso_utc) >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  return static_cast<long long>(::timegm(&tm)) * 1000;
}

// tick_worker serving ParisTwoOClock on mem:// (the store's clock is the
// process's) for `seconds`, its wall clock starting at `start` (UTC):
// the ticks it ran, and the last tick its schedule offered.
struct ParisRun {
  std::vector<long long> ticks;
  long long last_offered = -2;
};
ParisRun run_paris_from(const std::string& start, int seconds) {
  const std::string dir = temp_dir(), log = dir + "/log";
  std::string args[] = {"tick_worker", "mem://", log, "paris", std::to_string(seconds)};
  char* argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(), args[4].data(), nullptr};
  const SkewedEnvironment skewed("@" + start, {"TZ=UTC"});
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    skewed.exec(WEAVE_TICK_WORKER, argv);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  ParisRun r;
  std::ifstream in(log);
  for (std::string text; std::getline(in, text);) {
    std::istringstream s(text);
    char kind = 0;
    long long ms = 0;
    s >> kind >> ms;
    if (kind == 'S') r.ticks.push_back(ms);
    if (kind == 'N') r.last_offered = ms;
  }
  fs::remove_all(dir);
  return r;
}

}  // namespace

namespace {

// The oracle of workers that logged to `log` on `url`: no tick started twice
// (a second start is a later attempt under a newer token), every slot from
// the first tick run to the last offered ran or was counted missed; at
// least `min_ticks` ran, by `workers` processes.
void check_each_tick_once(const std::string& log, const std::string& url, std::size_t min_ticks, std::size_t workers) {
  std::map<long long, std::vector<Line>> starts;  // tick -> its starts
  std::set<pid_t> ran_by;
  for (const Line& l : read_log(log)) {
    if (l.kind != 'S') continue;
    starts[l.tick].push_back(l);
    ran_by.insert(l.pid);
  }
  REQUIRE(starts.size() >= min_ticks);
  CHECK(ran_by.size() == workers);  // each worker ran ticks
  std::uint64_t first_attempts = 0;
  for (const auto& [tick, runs] : starts) {
    INFO("tick " << tick);
    CHECK(tick % kPeriod == 0);
    CHECK(runs.front().attempt == 1);
    first_attempts += std::count_if(runs.begin(), runs.end(), [](const Line& l) { return l.attempt == 1; });
    for (std::size_t i = 1; i < runs.size(); ++i) {
      // a second start is the next attempt of the tick (a fault cut the first short), under a newer token
      CHECK(runs[i].attempt > runs[i - 1].attempt);
      CHECK(runs[i].token > runs[i - 1].token);
    }
  }
  CHECK(first_attempts == starts.size());  // no tick started twice
  const weave::detail::QueueTicks s = stored(url);
  const long long first = starts.begin()->first;
  REQUIRE(s.last_tick_ms > starts.rbegin()->first);
  CHECK(s.missed == static_cast<std::uint64_t>((s.last_tick_ms - first) / kPeriod) - starts.size());
}

// No tick has two first attempts in the log.
bool no_tick_started_twice(const std::string& log) {
  std::set<long long> started;
  for (const Line& l : read_log(log))
    if (l.kind == 'S' && l.attempt == 1 && !started.insert(l.tick).second) return false;
  return true;
}

// Whether a worker's clock (its S lines) was `skew_ms` off the store's, in either direction.
bool some_worker_skewed(const std::string& log, long long skew_ms) {
  for (const Line& l : read_log(log))
    if (l.kind == 'S' && (skew_ms < 0 ? l.clock - l.tick < skew_ms : l.clock - l.tick > skew_ms)) return true;
  return false;
}

}  // namespace

TEST_CASE("scheduled processes: three workers, two with clocks 5 min off, start each tick once, across a Redis restart from its AOF",
          "[scheduled][redis]") {
  const std::string dir = temp_dir(), log = dir + "/log";
  redis_test::RedisServer redis({"--appendonly", "yes", "--appendfsync", "always", "--dir", dir});
  std::vector<pid_t> workers = {spawn_worker(redis.url(), log, "-5m"), spawn_worker(redis.url(), log, ""),
                                spawn_worker(redis.url(), log, "+5m")};
  std::this_thread::sleep_for(2500ms);
  redis.restart();  // SIGKILL, then back from the AOF on the same port
  std::this_thread::sleep_for(2500ms);
  kill_all(workers);
  check_each_tick_once(log, redis.url(), 12, 3);
  CHECK(some_worker_skewed(log, -240'000));  // (the workers' clocks were 5 minutes off indeed)
  CHECK(some_worker_skewed(log, 240'000));
  fs::remove_all(dir);
}

TEST_CASE("scheduled processes: on redis+cluster:// three workers start each tick once", "[scheduled][redis]") {
  const std::string dir = temp_dir(), log = dir + "/log";
  cluster_test::Cluster cluster;
  std::vector<pid_t> workers = {spawn_worker(cluster.url(), log, "-5m"), spawn_worker(cluster.url(), log, ""),
                                spawn_worker(cluster.url(), log, "")};
  std::this_thread::sleep_for(4s);
  kill_all(workers);
  check_each_tick_once(log, cluster.url(), 10, 3);
  fs::remove_all(dir);
}

TEST_CASE("scheduled processes: on redis+sentinel:// three workers start each tick once", "[scheduled][redis]") {
  const std::string dir = temp_dir(), log = dir + "/log";
  sentinel_test::Sentinels sentinels;
  std::vector<pid_t> workers = {spawn_worker(sentinels.url(), log, ""), spawn_worker(sentinels.url(), log, "+5m"),
                                spawn_worker(sentinels.url(), log, "")};
  std::this_thread::sleep_for(4s);
  kill_all(workers);
  check_each_tick_once(log, sentinels.url(), 10, 3);
  fs::remove_all(dir);
}

TEST_CASE("scheduled processes: a run whose worker is SIGKILLed runs again on another worker, as attempt 2 of the same tick, within its lease and a second",
          "[scheduled][redis]") {
  const std::string dir = temp_dir(), log = dir + "/log";
  redis_test::RedisServer redis;
  std::vector<pid_t> workers = {spawn_worker(redis.url(), log, "", 3000), spawn_worker(redis.url(), log, "", 3000)};
  const std::optional<Line> first = wait_for_line(log, [](const Line& l) { return l.kind == 'S'; });
  REQUIRE(first);
  const pid_t victim = first->pid;
  ::kill(victim, SIGKILL);
  const long long killed_at = now_ms();
  const std::optional<Line> again =
      wait_for_line(log, [&](const Line& l) { return l.kind == 'S' && l.tick == first->tick && l.attempt == 2; });
  std::this_thread::sleep_for(1s);  // (runs of 3 s on a 250 ms period: the next ticks must wait, not start twice)
  kill_all(workers);
  REQUIRE(again);
  CHECK(again->pid != victim);
  CHECK(again->token > first->token);
  CHECK(no_tick_started_twice(log));
  CHECK(again->clock - killed_at <= (kLease + 1s).count());
  fs::remove_all(dir);
}

TEST_CASE("scheduled processes: a run whose worker is SIGSTOPped runs again elsewhere, and the worker, resumed, finds its lease lost",
          "[scheduled][redis]") {
  const std::string dir = temp_dir(), log = dir + "/log";
  redis_test::RedisServer redis;
  std::vector<pid_t> workers = {spawn_worker(redis.url(), log, "", 4000), spawn_worker(redis.url(), log, "", 4000)};
  const std::optional<Line> first = wait_for_line(log, [](const Line& l) { return l.kind == 'S'; });
  REQUIRE(first);
  const pid_t victim = first->pid;
  ::kill(victim, SIGSTOP);
  const std::optional<Line> again =
      wait_for_line(log, [&](const Line& l) { return l.kind == 'S' && l.tick == first->tick && l.attempt == 2; });
  ::kill(victim, SIGCONT);
  const std::optional<Line> lost = wait_for_line(
      log, [&](const Line& l) { return l.kind == 'L' && l.tick == first->tick && l.pid == victim; });
  std::this_thread::sleep_for(300ms);
  kill_all(workers);
  REQUIRE(again);
  CHECK(again->pid != victim);
  CHECK(lost);
  for (const Line& l : read_log(log)) CHECK_FALSE((l.kind == 'E' && l.tick == first->tick && l.attempt == 1));
  CHECK(no_tick_started_twice(log));
  fs::remove_all(dir);
}

TEST_CASE("scheduled processes: by a store clock crossing Paris's October change, the repeated hour's ticks run once, in its first pass",
          "[scheduled]") {
  // 00:59:45 UTC is 02:59:45 CEST; at 01:00 UTC the clocks go back to 02:00 CET.
  const ParisRun r = run_paris_from("2026-10-25 00:59:45", 12);
  REQUIRE_FALSE(r.ticks.empty());
  for (long long t : r.ticks) {
    CHECK(t % 5000 == 0);
    CHECK(t < ms_at("2026-10-25 01:00:00"));  // none in the second pass of 02:xx
  }
  CHECK(r.last_offered == ms_at("2026-10-26 01:00:00"));  // next: 02:00:00 CET the next day
}

TEST_CASE("scheduled processes: by a store clock crossing Paris's March change, the skipped hour's ticks do not run",
          "[scheduled]") {
  // 00:59:50 UTC is 01:59:50 CET; at 01:00 UTC the clocks go to 03:00 CEST: no 02:xx that day.
  const ParisRun r = run_paris_from("2026-03-29 00:59:50", 4);
  CHECK(r.ticks.empty());
  CHECK(r.last_offered == ms_at("2026-03-30 00:00:00"));  // next: 02:00 CEST the next day
}
