// A known workload through every feature on mem://, then two files for
// check_metrics.py: the exposition text weave::write_metrics() wrote, and
// what each sample must say, taken from the library's own counters
// (LockStats, CacheStats, DedupeStats, Queue::stats()) and the workload.
//   metrics_workload <metrics.txt> <expected.json>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "metrics_service.h"
#include "metrics_service.weave.h"
#include "weave/cache.h"
#include "weave/dedupe.h"
#include "weave/event.h"
#include "weave/lock.h"
#include "weave/metrics.h"
#include "weave/queue.h"
#include "weave/quota.h"
#include "weave/rate_limit.h"
#include "weave/semaphore.h"

using namespace std::chrono_literals;
using nlohmann::json;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: metrics_workload <metrics.txt> <expected.json>\n";
    return 2;
  }
  weave::set_event_handler({});  // counted all the same
  weave::Woven<metricstest::Shop> shop;
  metricstest::Shop& s = shop;
  json expected = json::array();
  auto expect = [&](std::string name, json labels, double value) {
    expected.push_back({{"name", std::move(name)}, {"labels", std::move(labels)}, {"value", value}});
  };

  // lock: 5 woven calls on two keys, one refused while LockClient holds the key
  for (int i = 0; i < 5; ++i) s.bump(i % 2 ? "a" : "b");
  {
    weave::LeaseHandle held = weave::default_lock_client().acquire("acct:a");
    std::thread([&] {
      try {
        s.bump("a");
      } catch (const weave::LockBusy&) {
      }
    }).join();
  }
  const weave::LockStats ls = weave::default_lock_client().stats();
  const json tmpl = {{"lock", "acct:<id>"}}, direct = {{"lock", ""}};
  expect("weave_lock_acquired_total", tmpl, 5);
  expect("weave_lock_busy_total", tmpl, 1);
  expect("weave_lock_released_total", tmpl, 5);
  expect("weave_lock_held", tmpl, 0);
  expect("weave_lock_wait_seconds_count", tmpl, 6);
  expect("weave_lock_hold_seconds_count", tmpl, 5);
  expect("weave_lock_acquired_total", direct, 1);
  expect("weave_lock_released_total", direct, 1);
  // The client's own counts are the two series' sums.
  expect("sum:weave_lock_acquired_total", json::object(), static_cast<double>(ls.acquired));
  expect("sum:weave_lock_busy_total", json::object(), static_cast<double>(ls.busy));
  expect("sum:weave_lock_released_total", json::object(), static_cast<double>(ls.released));
  expect("sum:weave_lock_errors_total", json::object(), static_cast<double>(ls.errors));
  expect("sum:weave_lock_lost_total", json::object(), static_cast<double>(ls.lost));

  // cache: two loads, two local hits
  s.price("ab");
  s.price("ab");
  s.price("ab");
  s.price("xyz");
  const weave::CacheStats cs = weave::cache_stats("price");
  const json cache = {{"cache", "price"}};
  expect("weave_cache_loads_total", cache, static_cast<double>(cs.loads));
  expect("weave_cache_loads_total", cache, 2);
  expect("weave_cache_hits_total", {{"cache", "price"}, {"tier", "local"}}, static_cast<double>(cs.local_hits));
  expect("weave_cache_hits_total", {{"cache", "price"}, {"tier", "local"}}, 2);
  expect("weave_cache_misses_total", {{"cache", "price"}, {"tier", "local"}}, static_cast<double>(cs.local_misses));
  expect("weave_cache_load_seconds_count", cache, 2);
  expect("weave_cache_local_entries", cache, static_cast<double>(cs.local_entries));
  expect("weave_cache_local_entries", cache, 2);

  // dedupe: two first calls, two replays
  s.pay("o-1");
  s.pay("o-1");
  s.pay("o-1");
  s.pay("o-2");
  const weave::DedupeStats ds = weave::dedupe_stats();
  const json pay = {{"dedupe", "pay:<order>"}};
  expect("weave_dedupe_first_calls_total", pay, static_cast<double>(ds.first_calls));
  expect("weave_dedupe_first_calls_total", pay, 2);
  expect("weave_dedupe_duplicates_total", pay, static_cast<double>(ds.duplicates));
  expect("weave_dedupe_replays_total", pay, 2);

  // queue: 4 added (one id twice), 3 taken: ack, retry, dead
  weave::Queue q("jobs");
  q.offer_json("1", 0ms, {.id = "m1"});
  q.offer_json("1", 0ms, {.id = "m1"});
  q.offer_json("2", 0ms, {.id = "m2"});
  q.offer_json("3", 0ms, {.id = "m3"});
  q.offer_json("4", 1h, {.id = "m4"});
  q.take_json(1s)->ack();
  q.take_json(1s)->retry(1h);
  q.take_json(1s)->dead("refused by the workload");
  const weave::QueueStats qs = q.stats();
  const json jobs = {{"queue", "jobs"}};
  expect("weave_queue_offered_total", jobs, 4);
  expect("weave_queue_offered_existing_total", jobs, 1);
  expect("weave_queue_delivered_total", jobs, 3);
  expect("weave_queue_acked_total", jobs, 1);
  expect("weave_queue_retried_total", jobs, 1);
  expect("weave_queue_dead_lettered_total", jobs, 1);
  expect("weave_queue_lateness_seconds_count", jobs, 3);
  expect("weave_queue_processing_seconds_count", jobs, 3);
  expect("weave_queue_store_up", jobs, 1);
  expect("weave_queue_messages", {{"queue", "jobs"}, {"state", "delayed"}}, static_cast<double>(qs.delayed));
  expect("weave_queue_messages", {{"queue", "jobs"}, {"state", "delayed"}}, 2);
  expect("weave_queue_messages", {{"queue", "jobs"}, {"state", "dead"}}, static_cast<double>(qs.dead));
  expect("weave_queue_messages", {{"queue", "jobs"}, {"state", "dead"}}, 1);
  expect("weave_queue_messages", {{"queue", "jobs"}, {"state", "in_flight"}}, 0);
  expect("weave_events_total", {{"feature", "queue"}, {"kind", "dead_lettered"}}, 1);

  // rate_limit: 3 woven calls, one admitted, two skipped; 2 RateLimiter decisions
  s.quote("ann");
  s.quote("ann");
  s.quote("ann");
  weave::RateLimiter limits;
  limits.try_acquire("direct", {.permits = 1, .per = 1h});
  limits.try_acquire("direct", {.permits = 1, .per = 1h});
  const weave::QuotaStats rs = weave::quota_stats();
  const json api = {{"rate_limit", "api:<user>"}}, direct_limit = {{"rate_limit", ""}};
  expect("weave_rate_limit_admitted_total", api, 1);
  expect("weave_rate_limit_limited_total", api, 2);
  expect("weave_rate_limit_waited_total", api, 0);
  expect("weave_rate_limit_errors_total", api, 0);
  expect("weave_rate_limit_wait_seconds_count", api, 1);
  expect("weave_rate_limit_admitted_total", direct_limit, 1);
  expect("weave_rate_limit_limited_total", direct_limit, 1);
  expect("sum:weave_rate_limit_admitted_total", json::object(), static_cast<double>(rs.admitted));
  expect("sum:weave_rate_limit_limited_total", json::object(), static_cast<double>(rs.limited));

  // semaphore: 2 woven calls run, 1 skipped while Semaphore holds the key's
  // one permit (which counts under semaphore="")
  s.report("q3");
  {
    weave::Semaphore sem;
    weave::Permit held = sem.acquire("report:q3", {.permits = 1});
    s.report("q3");
  }
  s.report("q3");
  const weave::QuotaStats ss = weave::quota_stats();
  const json report = {{"semaphore", "report:<name>"}}, direct_sem = {{"semaphore", ""}};
  expect("weave_semaphore_acquired_total", report, 2);
  expect("weave_semaphore_busy_total", report, 1);
  expect("weave_semaphore_released_total", report, 2);
  expect("weave_semaphore_held", report, 0);
  expect("weave_semaphore_waited_total", report, 0);
  expect("weave_semaphore_lost_total", report, 0);
  expect("weave_semaphore_wait_seconds_count", report, 2);
  expect("weave_semaphore_acquired_total", direct_sem, 1);
  expect("weave_semaphore_released_total", direct_sem, 1);
  expect("sum:weave_semaphore_acquired_total", json::object(), static_cast<double>(ss.permits_acquired));
  expect("sum:weave_semaphore_busy_total", json::object(), static_cast<double>(ss.permits_busy));

  std::ofstream(argv[1]) << weave::metrics_text();
  std::ofstream(argv[2]) << expected.dump(1) << '\n';
  return s.bumps == 5 && s.loads == 2 && s.payments == 2 && s.quotes == 1 && s.reports == 2 ? 0 : 1;
}
