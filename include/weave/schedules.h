// weave/schedules.h — a store's [[scheduled]] schedules as operators see
// them: the next tick, the last run, the misses; pause and resume
// (docs/scheduled.md; the `weave schedules` command).
//
//   for (const weave::ScheduleStatus& s : weave::list_schedules())
//     std::cout << s.name << ": " << s.missed << " missed\n";
//   weave::pause_schedule("nightly-report");    // no tick of it runs until resumed
//   weave::resume_schedule("nightly-report");   // it goes on with its first tick after now
//
// The store is the queue's (QueueOptions::url: weave::configure_queues, or
// the environment and config file). Each call may throw what the store
// throws (weave::IoError...).
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace WEAVE_NAMESPACE {

// The record a worker keeps of a schedule's last run.
struct ScheduleRun {
  std::chrono::system_clock::time_point tick;     // the tick it ran for
  int attempt = 0;                                // 1, then 2... for the same tick tried again
  std::string worker;                             // "host/pid"
  std::chrono::system_clock::time_point started;  // by the store's clock
  std::chrono::milliseconds took{0};
  std::string outcome;  // ran, skipped (an interceptor below skipped it), failed (tried again), dead, rejected
  std::string error;    // the exception's text, for failed, dead, rejected
};

struct ScheduleStatus {
  std::string name;
  // The tick queued next, if it is still ahead by the store's clock.
  std::optional<std::chrono::system_clock::time_point> next_tick;
  std::uint64_t missed = 0;  // ticks no worker ran (misfire, overlap), counted once each
  std::optional<ScheduleRun> last_run;
  bool paused = false;
};

// Every schedule whose ticks the store holds, by name.
WEAVE_API std::vector<ScheduleStatus> list_schedules();
// One schedule (a name the store has never seen: no next tick, no run).
WEAVE_API ScheduleStatus schedule_status(std::string_view name);
// Paused, a schedule queues no tick, and a tick queued before is not run
// when taken (neither counts as missed). Resumed, it goes on with its first
// tick after now, within 10 s (a worker's idle look).
WEAVE_API void pause_schedule(std::string_view name);
WEAVE_API void resume_schedule(std::string_view name);

}  // namespace WEAVE_NAMESPACE
