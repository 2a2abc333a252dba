// How DelayWorker serves [[scheduled]] methods: through the schedule
// library (Weave::schedule registers its server when linked), so the queue
// library knows no cron and no time zone. One server per schedule a worker
// serves; each of the worker's threads for it calls work().
#pragma once

#include <memory>
#include <stop_token>

#include "weave/delay_worker.h"
#include "weave/generated/method_info.h"

namespace WEAVE_NAMESPACE::detail {

class ScheduleServer {
 public:
  virtual ~ScheduleServer() = default;
  // The schedule's name (its queue's, its records').
  virtual const std::string& name() const noexcept = 0;
  // Takes and runs the schedule's ticks until `stop` is requested, counting
  // in `counts`. Throws a non-retryable weave::Error it cannot go on after.
  virtual void work(std::stop_token stop, WorkerCounts& counts) = 0;
};

// Throws UsageError for a schedule it cannot run (a cron expression or zone
// this build does not take).
using ScheduleServerFactory = std::shared_ptr<ScheduleServer> (*)(const MethodInfo& method, void* owner);
void register_schedule_server(ScheduleServerFactory factory);
// The registered factory, or null (Weave::schedule not linked).
ScheduleServerFactory schedule_server_factory() noexcept;

}  // namespace weave::detail
