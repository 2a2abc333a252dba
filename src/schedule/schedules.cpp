// weave/schedules.h over the queue store: each schedule's queue
// "schedule/<name>" holds its ticks and its record (tick_worker.h).
#include "weave/schedules.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "queue/queue_runtime.h"
#include "schedule/tick_worker.h"

namespace WEAVE_NAMESPACE {

namespace {

using std::chrono::milliseconds;
using TimePoint = std::chrono::system_clock::time_point;

std::shared_ptr<detail::QueueState> schedule_queue(std::string_view name) {
  return detail::queue_runtime_slot().get()->state(std::string(detail::kScheduleQueuePrefix) + std::string(name));
}

// The worker's record (tick_worker.cpp) as a ScheduleRun; none when it is
// not one (written by something else).
std::optional<ScheduleRun> run_of(const std::string& record) {
  if (record.empty()) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(record);
    ScheduleRun r;
    r.tick = TimePoint(milliseconds(j.at("tick_ms").get<std::int64_t>()));
    r.attempt = j.at("attempt").get<int>();
    r.worker = j.at("worker").get<std::string>();
    r.started = TimePoint(milliseconds(j.at("started_ms").get<std::int64_t>()));
    r.took = milliseconds(j.at("took_ms").get<std::int64_t>());
    r.outcome = j.at("outcome").get<std::string>();
    r.error = j.value("error", "");
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

ScheduleStatus schedule_status(std::string_view name) {
  const detail::QueueTicks t = schedule_queue(name)->store().ticks(name);
  ScheduleStatus s;
  s.name = std::string(name);
  if (t.last_tick_ms > t.now_ms) s.next_tick = TimePoint(milliseconds(t.last_tick_ms));
  s.missed = t.missed;
  s.last_run = run_of(t.last_run);
  s.paused = t.paused;
  return s;
}

std::vector<ScheduleStatus> list_schedules() {
  std::vector<ScheduleStatus> out;
  const std::string_view prefix = detail::kScheduleQueuePrefix;
  for (const std::string& queue : detail::queue_runtime_slot().get()->ticking_queues())
    if (queue.starts_with(prefix) && queue.size() > prefix.size()) out.push_back(schedule_status(queue.substr(prefix.size())));
  std::sort(out.begin(), out.end(), [](const ScheduleStatus& a, const ScheduleStatus& b) { return a.name < b.name; });
  return out;
}

void pause_schedule(std::string_view name) { schedule_queue(name)->store().pause_schedule(name, true); }
void resume_schedule(std::string_view name) {
  const std::shared_ptr<detail::QueueState> q = schedule_queue(name);
  q->store().pause_schedule(name, false);
  // A message a waiting worker takes at once: it plans the schedule's next
  // tick now, not at its next idle look (tick_worker.h).
  // Its own id each time: one left dead by a crash never shadows a later one.
  const std::string id = "plan-" + detail::new_id();
  detail::QueueOffer plan;
  plan.id = id;
  plan.payload = R"({"plan":true})";
  plan.retries = 3;
  q->store().offer(plan);
}

}  // namespace WEAVE_NAMESPACE
