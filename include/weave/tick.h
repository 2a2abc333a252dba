// weave/tick.h — one run of a [[scheduled]] method (docs/scheduled.md).
//
//   class Reports {
//    public:
//     virtual ~Reports() = default;
//     [[scheduled(cron="0 */5 * * * *", zone="Europe/Paris", misfire=run_once)]]
//     virtual void rollup();
//     [[scheduled(every=30s)]]
//     virtual void reconcile(const weave::Tick& tick);      // or take none and ask current_tick()
//   };
//   weave::Woven<Reports> reports;
//   weave::DelayWorker worker;  worker.serve(reports);  worker.run(stop);  // in every instance
//
//   void Reports::rollup() {
//     const weave::Tick* t = weave::current_tick();          // null outside a scheduled run
//     db.save_rollup(t->time, t->fencing_token);             // a store that keeps the largest token refuses a late write
//   }
//
// Each tick of a schedule is started once across every worker serving it:
// ticks come from the store's clock, and a run holds its tick under a lease
// (renewed while it runs; weave::current_tick_lease()). A run that throws,
// or whose worker dies or stops past the lease, is tried again as the next
// attempt of the same tick, as [[delay]]'s retries and backoff say.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "weave/held_lease.h"

namespace WEAVE_NAMESPACE {

struct Tick {
  std::string schedule;                         // the schedule's name
  std::chrono::system_clock::time_point time;   // when the tick was due, by the store's clock
  int attempt = 1;                              // 2, 3...: the same tick tried again
  std::uint64_t fencing_token = 0;              // grows with every run of the schedule's ticks

  friend bool operator==(const Tick&, const Tick&) = default;
};

// The tick the running [[scheduled]] method was started for, on the thread
// running it (and where its CallContext is installed); null elsewhere, and
// in a direct call of the method.
WEAVE_API const Tick* current_tick() noexcept;
// The lease the run holds its tick under: its stop_token() fires when the
// tick is taken back (this worker was stopped or hung past the lease), as
// another worker may then run it. Null where current_tick() is.
WEAVE_API const HeldLease* current_tick_lease() noexcept;

// A Tick as JSON (a method taking one has its calls stored with it).
inline void to_json(nlohmann::json& j, const Tick& t) {
  j = nlohmann::json{{"schedule", t.schedule},
                     {"time_ms", std::chrono::duration_cast<std::chrono::milliseconds>(t.time.time_since_epoch()).count()},
                     {"attempt", t.attempt},
                     {"fencing_token", t.fencing_token}};
}
inline void from_json(const nlohmann::json& j, Tick& t) {
  j.at("schedule").get_to(t.schedule);
  t.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(j.at("time_ms").get<std::int64_t>()));
  j.at("attempt").get_to(t.attempt);
  j.at("fencing_token").get_to(t.fencing_token);
}

}  // namespace WEAVE_NAMESPACE
