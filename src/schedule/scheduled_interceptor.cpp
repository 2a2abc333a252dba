// The built-in `scheduled` interceptor and the tick a run holds
// (weave/tick.h). A direct call of a [[scheduled]] method runs it now, with
// the rest of its chain; DelayWorker runs its ticks below this interceptor
// (tick_worker.cpp), which it registers as the queue library's schedule server.
#include "core/builtin.h"
#include "schedule/tick_worker.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/tick.h"

namespace WEAVE_NAMESPACE {
namespace {

class ScheduledInterceptor final : public Interceptor {
 public:
  void around(Invocation& inv) override { inv.proceed(); }
};

const detail::TickLink* running_tick() noexcept {
  return static_cast<const detail::TickLink*>(
      detail::find_in_context(detail::HeldKind::tick, [](const HeldLease&) { return true; }));
}

}  // namespace

const Tick* current_tick() noexcept {
  const detail::TickLink* link = running_tick();
  return link ? &link->tick : nullptr;
}

const HeldLease* current_tick_lease() noexcept {
  const detail::TickLink* link = running_tick();
  return link ? link->held : nullptr;
}

// Registers `scheduled` with Weave::core, and the schedule server with the
// queue's DelayWorker, when this library is linked: its static targets name
// weave_link_schedule (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_schedule = 0;

namespace {
[[maybe_unused]] const bool scheduled_registered = [] {
  detail::register_builtin_interceptor(
      "scheduled", [] { return std::shared_ptr<Interceptor>(std::make_shared<ScheduledInterceptor>()); });
  detail::register_schedule_server(&detail::make_tick_server);
  return true;
}();
}  // namespace

}  // namespace WEAVE_NAMESPACE
