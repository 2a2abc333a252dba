// The schedule worker: how DelayWorker runs a [[scheduled]] method's ticks
// (docs/scheduled.md). Each schedule has a delay queue of its own,
// "schedule/<name>", holding its ticks as messages (id: the tick's time in
// ms; payload {"tick": ms, "planned": bool}). The queue gives what a tick
// needs: due times on the store's clock, a tick added once ever
// (QueueOffer::schedule), a delivery that is a lease with a fencing token,
// stalled and failed runs tried again as attempts of the same tick.
//
// Who offers which tick: the worker that takes a tick decides the next one
// (with overlap=skip|wait when its run ends, with overlap=allow when it
// starts), from the store's clock and the schedule alone:
//   - the next tick ahead, "not planned": due at its time, it runs if taken
//     within `grace`; taken later (no worker was free), misfire decides what
//     runs instead: the ticks since it are planned anew from the clock;
//   - a tick already due that the policy says to run ("planned"): it runs
//     whenever taken.
// Each plan starts from the schedule's last tick offered, and its offer is
// added only if that is still the last (QueueOffer::if_last_tick): of two
// workers planning at once from different clocks' moments, one wins, so a
// schedule never has two ticks live unless overlap=allow. Misses ride on
// the offer that follows them (counted once, whoever offers it). A worker whose queue holds no live tick (a new schedule, every
// worker was stopped, the last tick went dead) plans from the last tick
// offered, at start, whenever a take waits in vain, and when it takes the
// message resume_schedule() queues ({"plan": true}).
#pragma once

#include <memory>
#include <string>

#include "core/call_context.h"
#include "queue/schedule_server.h"
#include "weave/tick.h"

namespace WEAVE_NAMESPACE::detail {

// The running tick in the call's context: current_tick() reads it.
struct TickLink final : ContextLink {
  Tick tick;
  std::shared_ptr<const void> keep;  // the delivery whose lease `held` is
};

// The prefix of a schedule's queue name.
inline constexpr std::string_view kScheduleQueuePrefix = "schedule/";

std::shared_ptr<ScheduleServer> make_tick_server(const MethodInfo& method, void* owner);

}  // namespace weave::detail
