// [[scheduled]] on every store (docs/scheduled.md): DelayWorkers serving the
// same schedule run each tick once, on the store's clock, with the
// interceptors below; misses while no worker ran follow `misfire`, runs
// longer than the period follow `overlap`, and every missed tick is counted
// in the store. Ticks are checked against the schedule's own arithmetic:
// an every= schedule's ticks are multiples of its period since the epoch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "queue/queue_runtime.h"
#include "scheduled_service.weave.h"
#include "weave/delay_worker.h"
#include "weave/lock.h"
#include "weave/metrics.h"
#include "weave/queue.h"
#include "weave/schedules.h"
#include "weave/tick.h"

using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

void use_store() {
  weave::QueueOptions q;
  q.url = test_store_url();
  weave::configure_queues(q);
  weave::LockOptions l;
  l.url = test_store_url();
  weave::configure_locks(l);
}

// A worker serving `jobs` on its own thread until stop() or the scope's end.
template <class W>
struct Running {
  explicit Running(W& jobs, int concurrency = 2) : worker({.concurrency = concurrency}) {
    worker.serve(jobs);
    thread = std::jthread([this](std::stop_token stop) { worker.run(stop); });
  }
  void stop() {
    thread.request_stop();
    thread.join();
  }
  weave::DelayWorker worker;
  std::jthread thread;
};

// The schedule's record in the store: last tick offered, misses, last run.
weave::detail::QueueTicks stored(const std::string& schedule) {
  weave::QueueOptions o;
  o.url = test_store_url();
  weave::detail::QueueRuntime rt(o);
  return rt.state("schedule/" + schedule)->store().ticks(schedule);
}

std::int64_t ms_of(const weave::Tick& t) {
  return std::chrono::duration_cast<milliseconds>(t.time.time_since_epoch()).count();
}

// The tick times run, sorted; fails the case when one ran twice on attempt 1.
std::vector<std::int64_t> first_runs(const std::vector<scheduletest::Ran>& ran) {
  std::vector<std::int64_t> ticks;
  for (const auto& r : ran)
    if (r.tick.attempt == 1) ticks.push_back(ms_of(r.tick));
  std::sort(ticks.begin(), ticks.end());
  CHECK(std::adjacent_find(ticks.begin(), ticks.end()) == ticks.end());  // no tick started twice
  return ticks;
}

// Every tick slot from the first run to the last tick offered (due after
// the workers stopped: not run) either ran or was counted missed, once.
void check_every_slot_accounted(const std::vector<std::int64_t>& ticks, std::int64_t period,
                                const std::string& schedule) {
  REQUIRE(ticks.size() >= 2);
  for (std::int64_t t : ticks) CHECK(t % period == 0);
  const weave::detail::QueueTicks s = stored(schedule);
  REQUIRE(s.last_tick_ms > ticks.back());
  const auto slots = static_cast<std::uint64_t>((s.last_tick_ms - ticks.front()) / period);
  CHECK(s.missed == slots - ticks.size());
}

// A weave_schedule_* sample of `schedule` in this process's metrics (-1: none).
double metric(const std::string& name, const std::string& schedule) {
  const std::string text = weave::metrics_text(), prefix = name + "{schedule=\"" + schedule + "\"} ";
  const auto at = text.find(prefix);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + prefix.size()));
}

std::vector<scheduletest::Ran> both(weave::Woven<scheduletest::Beat>& a, weave::Woven<scheduletest::Beat>& b) {
  std::vector<scheduletest::Ran> all = a.ran(), more = b.ran();
  all.insert(all.end(), more.begin(), more.end());
  return all;
}

}  // namespace

TEST_CASE("scheduled: two workers serving one schedule run each tick once, in order, under the lock below", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::Beat> a, b;
  {
    Running<weave::Woven<scheduletest::Beat>> wa(a), wb(b);
    std::this_thread::sleep_for(1500ms);
  }
  const std::vector<scheduletest::Ran> ran = both(a, b);
  const std::vector<std::int64_t> ticks = first_runs(ran);
  REQUIRE(ticks.size() >= 4);
  for (std::size_t i = 1; i < ticks.size(); ++i) CHECK(ticks[i] - ticks[i - 1] == 200);  // none skipped
  std::vector<std::pair<std::int64_t, std::uint64_t>> tokens;
  for (const auto& r : ran) {
    CHECK(r.tick.schedule == "beat");
    CHECK(r.tick.attempt == 1);
    CHECK(r.locked);
    tokens.emplace_back(ms_of(r.tick), r.tick.fencing_token);
  }
  std::sort(tokens.begin(), tokens.end());
  for (std::size_t i = 1; i < tokens.size(); ++i) CHECK(tokens[i].second > tokens[i - 1].second);  // fencing grows
  check_every_slot_accounted(ticks, 200, "beat");
  const nlohmann::json last = nlohmann::json::parse(stored("beat").last_run);
  CHECK(last["outcome"] == "ran");
  CHECK(last["tick_ms"].get<std::int64_t>() == ticks.back());
  CHECK(metric("weave_schedule_runs_total", "beat") == static_cast<double>(ran.size()));
  CHECK(metric("weave_schedule_lateness_seconds_count", "beat") == static_cast<double>(ran.size()));
}

TEST_CASE("scheduled: a direct call runs the method at once, with no tick", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::AllMissed> jobs;
  CHECK(weave::current_tick() == nullptr);
  // (run() records *current_tick(): a direct call has none, so call the one taking a Tick)
  weave::Woven<scheduletest::SkipMissed> skip;
  weave::Tick given{"by hand", std::chrono::system_clock::time_point(5s), 1, 0};
  static_cast<scheduletest::SkipMissed&>(skip).run(given);
  REQUIRE(skip.ran().size() == 1);
  CHECK(skip.ran().front().tick == given);
}

namespace {

// Runs `jobs` (every=200ms, grace=50ms) for 1 s, stops every worker for
// about 1 s, runs them again for 800 ms. The restart comes 100 ms after a
// tick (the store's clock is this machine's): the latest tick due then is
// late whatever the policy, the next one 100 ms away. Returns the restart's
// system time.
template <class W>
std::chrono::system_clock::time_point run_with_an_outage(W& jobs) {
  {
    Running<W> w(jobs);
    std::this_thread::sleep_for(1000ms);
  }
  std::this_thread::sleep_for(800ms);
  const auto since_tick = std::chrono::system_clock::now().time_since_epoch() % 200ms;
  std::this_thread::sleep_for((300ms - since_tick) % 200ms);
  const auto restart = std::chrono::system_clock::now();
  Running<W> w(jobs);
  std::this_thread::sleep_for(800ms);
  return restart;
}

// The first-attempt runs before and after the outage, and those of ticks
// due before the restart that ran after it (made up).
struct Outage {
  std::vector<std::int64_t> ticks;
  std::int64_t gap = 0;  // the longest distance between two ticks run
  int made_up = 0;
};

template <class W>
Outage outage_of(W& jobs, std::chrono::system_clock::time_point restart) {
  Outage o;
  o.ticks = first_runs(jobs.ran());
  for (std::size_t i = 1; i < o.ticks.size(); ++i) o.gap = std::max(o.gap, o.ticks[i] - o.ticks[i - 1]);
  const auto restart_local = std::chrono::steady_clock::now() - (std::chrono::system_clock::now() - restart);
  for (const auto& r : jobs.ran())
    if (r.tick.time < restart && r.at >= restart_local) ++o.made_up;
  return o;
}

}  // namespace

TEST_CASE("scheduled: misfire=skip runs none of the ticks missed while no worker ran, and counts each", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::SkipMissed> jobs;
  const auto restart = run_with_an_outage(jobs);
  const Outage o = outage_of(jobs, restart);
  CHECK(o.gap >= 1000);  // nothing ran for the outage
  CHECK(o.made_up == 0);
  check_every_slot_accounted(o.ticks, 200, "skip-missed");
  CHECK(metric("weave_schedule_missed_total", "skip-missed") == static_cast<double>(stored("skip-missed").missed));
}

TEST_CASE("scheduled: misfire=run_once runs one of the ticks missed while no worker ran, and counts the others", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::OnceMissed> jobs;
  const auto restart = run_with_an_outage(jobs);
  const Outage o = outage_of(jobs, restart);
  CHECK(o.made_up == 1);
  check_every_slot_accounted(o.ticks, 200, "once-missed");
}

TEST_CASE("scheduled: misfire=run_all runs the last max_catch_up ticks missed, oldest first, and counts the others", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::AllMissed> jobs;
  const auto restart = run_with_an_outage(jobs);
  const Outage o = outage_of(jobs, restart);
  CHECK(o.made_up == 3);  // max_catch_up=3 of the missed
  CHECK(o.gap >= 400);
  check_every_slot_accounted(o.ticks, 200, "all-missed");
}

TEST_CASE("scheduled: a run that throws is tried again as the next attempt of the same tick", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::Flaky> jobs;
  weave::DelayWorkerStats stats;
  {
    Running<weave::Woven<scheduletest::Flaky>> w(jobs);
    std::this_thread::sleep_for(1400ms);
    w.stop();
    stats = w.worker.stats();
  }
  std::map<std::int64_t, std::vector<weave::Tick>> by_tick;
  for (const auto& r : jobs.ran()) by_tick[ms_of(r.tick)].push_back(r.tick);
  REQUIRE(by_tick.size() >= 3);
  int retried = 0;
  for (const auto& [tick, attempts] : by_tick) {
    INFO(tick);
    CHECK(attempts.size() <= 2);
    CHECK(attempts[0].attempt == 1);
    if (attempts.size() == 2) {
      ++retried;
      CHECK(attempts[1].attempt == 2);
      CHECK(attempts[1].fencing_token > attempts[0].fencing_token);
    }
  }
  CHECK(retried >= static_cast<int>(by_tick.size()) - 1);  // (the last may have been stopped before its retry)
  CHECK(stats.failed == by_tick.size());
  CHECK(stats.ran == static_cast<std::uint64_t>(retried));
}

TEST_CASE("scheduled: overlap=skip skips the ticks due while the previous run still runs, and counts them", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::LongSkip> a, b;
  {
    Running<weave::Woven<scheduletest::LongSkip>> wa(a), wb(b);
    std::this_thread::sleep_for(1600ms);
  }
  std::vector<scheduletest::Ran> ran = a.ran(), more = b.ran();
  ran.insert(ran.end(), more.begin(), more.end());
  const std::vector<std::int64_t> ticks = first_runs(ran);
  REQUIRE(ticks.size() >= 3);
  for (std::size_t i = 1; i < ticks.size(); ++i) CHECK(ticks[i] - ticks[i - 1] >= 300);  // 250 ms runs: 2 ticks skipped
  // Runs one after another, whichever worker: each started after the one before had ended.
  std::sort(ran.begin(), ran.end(), [](const auto& x, const auto& y) { return x.at < y.at; });
  for (std::size_t i = 1; i < ran.size(); ++i) CHECK(ran[i].at - ran[i - 1].at >= 250ms);
  check_every_slot_accounted(ticks, 100, "long-skip");
}

TEST_CASE("scheduled: overlap=wait starts the tick due while the previous run ran once that run ends", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::LongWait> jobs;
  {
    Running<weave::Woven<scheduletest::LongWait>> w(jobs);
    std::this_thread::sleep_for(1600ms);
  }
  CHECK(jobs.most_running.load() == 1);
  const std::vector<std::int64_t> ticks = first_runs(jobs.ran());
  REQUIRE(ticks.size() >= 4);
  // A 250 ms run covers the next tick (never run: no overlap); the one due
  // when it ends runs then, late: after an on-time run, the tick 200 ms on
  // (overlap=skip would skip it: 50 ms late is past its grace).
  int waited = 0;
  for (std::size_t i = 1; i < ticks.size(); ++i) {
    CHECK(ticks[i] - ticks[i - 1] >= 200);
    waited += ticks[i] - ticks[i - 1] == 200 ? 1 : 0;
  }
  CHECK(waited >= 1);
  check_every_slot_accounted(ticks, 100, "long-wait");
}

TEST_CASE("scheduled: overlap=allow starts each tick on time while earlier runs still run", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::LongAllow> jobs;
  {
    Running<weave::Woven<scheduletest::LongAllow>> w(jobs, 4);
    std::this_thread::sleep_for(1600ms);
  }
  CHECK(jobs.most_running.load() >= 2);
  const std::vector<std::int64_t> ticks = first_runs(jobs.ran());
  REQUIRE(ticks.size() >= 8);
  check_every_slot_accounted(ticks, 100, "long-allow");
}

TEST_CASE("scheduled: a paused schedule runs no tick and counts none missed, resumed it goes on after the resume, and list_schedules() shows it", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::Pausable> jobs;
  Running<weave::Woven<scheduletest::Pausable>> w(jobs);
  std::this_thread::sleep_for(500ms);
  weave::pause_schedule("pausable");
  const auto paused_at = std::chrono::system_clock::now();
  const std::uint64_t missed_before = stored("pausable").missed;
  std::this_thread::sleep_for(800ms);
  const std::vector<weave::ScheduleStatus> listed = weave::list_schedules();
  const auto it = std::find_if(listed.begin(), listed.end(), [](const auto& s) { return s.name == "pausable"; });
  REQUIRE(it != listed.end());
  CHECK(it->paused);
  REQUIRE(it->last_run);
  CHECK(it->last_run->outcome == "ran");
  CHECK(it->last_run->attempt == 1);
  CHECK_FALSE(it->last_run->worker.empty());
  weave::resume_schedule("pausable");
  const auto resumed_at = std::chrono::system_clock::now();
  std::this_thread::sleep_for(1500ms);
  w.stop();
  int during = 0, after = 0;
  for (const auto& r : jobs.ran()) {
    during += r.tick.time > paused_at + 100ms && r.tick.time < resumed_at ? 1 : 0;
    after += r.tick.time >= resumed_at ? 1 : 0;
  }
  CHECK(during == 0);
  CHECK(after >= 10);
  const weave::ScheduleStatus s = weave::schedule_status("pausable");
  CHECK_FALSE(s.paused);
  CHECK(s.missed == missed_before);  // the pause's ticks are not misses
  // (next_tick: only while still ahead, which a stopped worker's last offer soon is not)
  CHECK(stored("pausable").last_tick_ms >
        std::chrono::duration_cast<std::chrono::milliseconds>(resumed_at.time_since_epoch()).count());
}

TEST_CASE("scheduled: a run whose error is not UTF-8 is recorded dead with its text repaired, and the schedule goes on", "[scheduled]") {
  use_store();
  weave::Woven<scheduletest::Garbled> jobs;
  weave::DelayWorkerStats stats;
  {
    Running<weave::Woven<scheduletest::Garbled>> w(jobs);
    std::this_thread::sleep_for(800ms);
    w.stop();
    stats = w.worker.stats();
  }
  CHECK(stats.failed == 1);
  CHECK(stats.ran >= 3);  // the worker went on after it
  CHECK(weave::Queue("schedule/garbled").stats().dead == 1);
  const std::vector<std::int64_t> ticks = first_runs(jobs.ran());
  REQUIRE(ticks.size() >= 4);
  for (std::size_t i = 1; i < ticks.size(); ++i) CHECK(ticks[i] - ticks[i - 1] == 100);  // the dead tick's next followed
}
