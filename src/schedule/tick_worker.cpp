// The schedule worker (tick_worker.h): takes a schedule's ticks from its
// queue, decides whether each runs (misfire, overlap), offers the next one,
// and runs the method through core's run_stored_call.
#include "schedule/tick_worker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "queue/queue_runtime.h"
#include "schedule/misfire.h"
#include "schedule/schedule.h"
#include "schedule/schedule_metrics.h"
#include "weave/annotation.h"
#include "weave/error.h"
#include "weave/generated/stored_call.h"
#include "weave/queue.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

namespace vocab = vocabulary::scheduled;
using std::chrono::milliseconds;
using Instant = Schedule::Instant;

// How long an idle take waits before the worker looks whether its schedule
// still has a live tick (one that went dead on a worker's crash leaves none).
constexpr milliseconds kIdleLook{10'000};

enum class Overlap { skip, wait, allow };  // the vocabulary's order

Instant instant(std::int64_t ms) { return Instant(milliseconds(ms)); }
std::int64_t ms_of(Instant t) { return t.time_since_epoch().count(); }

// "host/pid": where a run ran, in its record.
std::string worker_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + "/" + std::to_string(current_pid());
}

// The method's [[scheduled]] annotation (as weavegen emitted it).
Annotation scheduled_of(const MethodInfo& method) {
  return Annotation(method.annotations[method.stored_call->annotation], {});
}

// Its cron expression in its zone, or its period from the epoch.
Schedule schedule_of(const Annotation& a) {
  return a.has("cron") ? Schedule::cron(a.text("cron"), a.has("zone") ? a.text("zone") : "UTC")
                       : Schedule::every(a.duration("every"), Instant{});
}

class TickServer final : public ScheduleServer {
 public:
  TickServer(const MethodInfo& method, void* owner)
      : method_(method), owner_(owner), schedule_(schedule_of(scheduled_of(method))) {
    const Annotation a = scheduled_of(method);
    name_ = a.has("name") ? std::string(a.text("name")) : std::string(method.qualified_name);
    misfire_.misfire = static_cast<Misfire>(a.has("misfire") ? a.enum_index("misfire") : vocab::misfire);
    misfire_.max_catch_up =
        static_cast<std::uint32_t>(a.has("max_catch_up") ? a.integer("max_catch_up") : vocab::max_catch_up);
    misfire_.grace = a.has("grace") ? a.duration("grace") : vocab::grace;
    overlap_ = static_cast<Overlap>(a.has("overlap") ? a.enum_index("overlap") : vocab::overlap);
    retries_ = static_cast<int>(a.has("retries") ? a.integer("retries") : vocab::retries);
    backoff_ = a.has("backoff") ? a.duration("backoff") : vocab::backoff;
    backoff_cap_ = a.has("backoff_cap") ? a.duration("backoff_cap") : vocab::backoff_cap;
    queue_ = std::string(kScheduleQueuePrefix) + name_;
    check_queue_text(queue_, "schedule name", name_);
    series_ = &schedule_series(name_);
  }

  const std::string& name() const noexcept override { return name_; }

  void work(std::stop_token stop, WorkerCounts& counts) override {
    Queue queue(queue_);
    bool look = true;  // whether the schedule may have no live tick
    while (!stop.stop_requested()) {
      try {
        if (look) plan_if_idle(queue);
        std::vector<QueueDelivery> taken = queue.take_many_json(1, kIdleLook, stop);
        look = taken.empty();
        for (QueueDelivery& d : taken) serve(queue, d, counts);  // (a lost delivery is left to its new holder)
      } catch (const Error& e) {
        if (!e.retryable()) throw;
        look = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the store is away: it comes back
      }
    }
  }

 private:
  struct TickPayload {
    std::int64_t tick = 0;
    bool planned = false;
  };

  // After a plan made from `planned_from`, the schedule's last tick offered
  // then (-1: none): the first tick to run now, else the next one ahead,
  // offered with the misses counted, if the last tick is still that one;
  // `record` kept as the last run's either way.
  // True when the tick was added.
  bool offer_plan(QueueState& st, const DuePlan& plan, std::int64_t planned_from, std::string_view record) {
    if (!plan.run.empty()) return offer(st, ms_of(plan.run.front()), true, plan.missed, record, planned_from);
    if (plan.next) return offer(st, ms_of(*plan.next), false, plan.missed, record, planned_from);
    if (!record.empty()) offer(st, -1, false, 0, record);  // the schedule has no tick left: the record alone
    return false;
  }

  // A tick before 0 is never added: the record alone.
  bool offer(QueueState& st, std::int64_t tick, bool planned, std::uint64_t missed, std::string_view record,
             std::optional<std::int64_t> if_last_tick = std::nullopt) {
    const std::string id = std::to_string(tick);
    const std::string payload = nlohmann::json{{"tick", tick}, {"planned", planned}}.dump();
    QueueOffer o;
    o.id = id;
    o.payload = payload;
    o.retries = retries_;
    o.backoff = backoff_;
    o.backoff_cap = backoff_cap_;
    o.schedule = name_;
    o.tick_ms = tick;  // -1 (a record alone) is never after the last tick: nothing is added
    o.missed = missed;
    o.last_run = record;
    o.if_last_tick = if_last_tick;
    const bool added = st.store().offer(o).added;
    if (added && missed > 0) series_->counts.add(&ScheduleCountStripe::missed, missed);
    return added;
  }

  // A worker starting, one whose take waited in vain, or one holding the
  // message resume_schedule() sends (`holding`: 1, that message): with no
  // live tick in the queue (none ever, every worker stopped, the last one
  // went dead, or the schedule was paused), the ticks since the last one
  // offered are planned per misfire.
  void plan_if_idle(Queue& queue, std::uint64_t holding = 0) {
    const std::shared_ptr<QueueState> st = QueueAccess::state(queue);
    const QueueTicks t = st->store().ticks(name_);
    if (t.live > holding) return;  // its delivery plans what follows
    const std::optional<Instant> last =
        t.last_tick_ms < 0 ? std::nullopt : std::optional<Instant>(instant(t.last_tick_ms));
    offer_plan(*st, plan_due(schedule_, last, instant(t.now_ms), misfire_), t.last_tick_ms, "");
  }

  // What follows the run of `tick` that started at `started` (store clock)
  // and ended at `now`: ticks due already when it started are a backlog,
  // made up as misfire says; ticks that came due while it ran came while
  // the previous run still ran: overlap=skip skips them (the latest runs
  // if still on time), overlap=wait runs the latest (each, with
  // misfire=run_all).
  DuePlan plan_after(std::int64_t tick, std::int64_t started, std::int64_t now) const {
    DuePlan backlog = plan_due(schedule_, instant(tick), instant(started), misfire_);
    if (!backlog.run.empty()) return backlog;
    MisfirePolicy p = misfire_;
    if (overlap_ == Overlap::skip)
      p.misfire = Misfire::skip;
    else if (p.misfire == Misfire::skip)
      p.misfire = Misfire::run_once;
    return plan_due(schedule_, instant(tick), instant(now), p);
  }

  // Runs `step` (store calls about the tick `d` holds) until it answers,
  // sending it again after a retryable store error while the lease holds
  // (a settle sent again answers as its first send). False when the lease
  // was lost first: the attempt holding the tick now decides what follows.
  template <class Step>
  static bool while_held(QueueDelivery& d, Step&& step) {
    for (;;) {
      if (d.lease().lost()) return false;
      try {
        step();
        return true;
      } catch (const DeliveryLost&) {
        return false;
      } catch (const Error& e) {
        if (!e.retryable()) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the store is away: it comes back
      }
    }
  }

  // plan_if_idle() where a worker's offer was refused (the last tick moved
  // on meanwhile: a resume, or another worker's plan): if that left no live
  // tick, one is planned now rather than at the next idle look. A store
  // error leaves it to that look.
  void plan_again(Queue& queue) noexcept {
    try {
      plan_if_idle(queue);
    } catch (...) {
    }
  }

  void not_run(QueueDelivery& d, WorkerCounts& counts) {
    if (!while_held(d, [&] { d.ack(); })) return;
    ++counts.skipped;
    series_->counts.add(&ScheduleCountStripe::not_run);
  }

  void serve(Queue& queue, QueueDelivery& d, WorkerCounts& counts) {
    const std::shared_ptr<QueueState> st = QueueAccess::state(queue);
    TickPayload p;
    try {
      const nlohmann::json j = nlohmann::json::parse(d.payload());
      if (j.value("plan", false)) {  // resume_schedule(): plan now rather than at the next idle look
        if (while_held(d, [&] { plan_if_idle(queue, 1); })) while_held(d, [&] { d.ack(); });
        return;
      }
      p.tick = j.at("tick").get<std::int64_t>();
      p.planned = j.at("planned").get<bool>();
    } catch (const nlohmann::json::exception& e) {
      ++counts.rejected;
      while_held(d, [&] { d.dead("not a tick of schedule '" + name_ + "' (written by something else?): " + e.what()); });
      return;
    }
    QueueTicks t;
    if (!while_held(d, [&] { t = st->store().ticks(name_); })) return;
    if (t.paused) return not_run(d, counts);  // paused after it was offered: resumed, the schedule plans anew
    if (d.attempt() == 1 && !p.planned && t.now_ms - p.tick > misfire_.grace.count()) {
      // Taken late (no worker was free at its time): the ticks since it, planned anew.
      const DuePlan plan = plan_due(schedule_, instant(p.tick - 1), instant(t.now_ms), misfire_);
      if (plan.run.empty() || ms_of(plan.run.front()) != p.tick) {
        bool added = false;
        if (!while_held(d, [&] { added = offer_plan(*st, plan, p.tick, ""); })) return;
        not_run(d, counts);
        if (!added) plan_again(queue);
        return;
      }
    }
    if (overlap_ == Overlap::allow &&  // the next tick may start while this one runs (each attempt: a crash before)
        !while_held(d, [&] { offer_plan(*st, plan_due(schedule_, instant(p.tick), instant(t.now_ms), misfire_), p.tick, ""); }))
      return;
    run(queue, *st, d, p.tick, counts);
  }

  void run(Queue& queue, QueueState& st, QueueDelivery& d, std::int64_t tick_ms, WorkerCounts& counts) {
    auto link = std::make_shared<TickLink>();
    link->kind = HeldKind::tick;
    link->tick = Tick{name_, std::chrono::system_clock::time_point(milliseconds(tick_ms)), d.attempt(),
                      d.fencing_token()};
    const std::shared_ptr<HeldDelivery>& held = QueueAccess::shared(d);
    link->held = held.get();
    link->keep = held;
    link->parent = context_head();
    const std::string args = method_.param_names.empty() ? "[]" : "[" + nlohmann::json(link->tick).dump() + "]";
    const std::int64_t started = held->message.now_ms;
    if (d.attempt() == 1) series_->lateness.observe(milliseconds(std::max<std::int64_t>(0, started - tick_ms)));
    const auto began = std::chrono::steady_clock::now();
    std::string outcome = "ran", error;
    try {
      const ContextPush in(std::move(link));
      if (!run_stored_call(method_, owner_, method_.stored_call->signature_hash, args)) outcome = "skipped";
    } catch (const StoredCallRejected& e) {
      outcome = "rejected";
      error = e.what();
    } catch (const std::exception& e) {
      outcome = "failed";
      error = e.what();
    } catch (...) {
      outcome = "failed";
      error = "a non-standard exception";
    }
    const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - began);
    if (d.lease().lost()) return;  // taken back: the attempt that has it now decides what follows
    bool ended = true;             // false: the tick is tried again
    if (outcome == "failed") {
      ++counts.failed;
      series_->counts.add(&ScheduleCountStripe::failed);
      if (!while_held(d, [&] { ended = d.fail(error); })) return;
      if (ended) outcome = "dead";
    } else if (outcome == "rejected") {
      ++counts.rejected;
      if (!while_held(d, [&] { d.dead(error); })) return;
    } else {
      ++(outcome == "ran" ? counts.ran : counts.skipped);
      series_->counts.add(outcome == "ran" ? &ScheduleCountStripe::ran : &ScheduleCountStripe::not_run);
    }
    nlohmann::json record{{"tick_ms", tick_ms},   {"attempt", d.attempt()}, {"worker", worker_name()},
                          {"started_ms", started}, {"took_ms", took.count()}, {"outcome", outcome}};
    if (!error.empty()) record["error"] = error;
    // (an exception's text need not be UTF-8: its bad bytes are replaced, never thrown over)
    const std::string text = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // The next tick is offered before this one's ack, so the queue always
    // holds a live tick (an idle worker finding none would plan too). A
    // failed attempt that goes dead is settled already: the next tick then
    // follows it at once.
    bool added = false, planned = false;
    const bool settled = outcome != "ran" && outcome != "skipped";
    auto plan_next = [&] {
      const QueueTicks t = st.store().ticks(name_);
      planned = ended && overlap_ != Overlap::allow && t.last_tick_ms <= tick_ms;
      if (planned)
        added = offer_plan(st, plan_after(tick_ms, started, t.now_ms), tick_ms, text);
      else
        offer(st, t.last_tick_ms, false, 0, text);  // planned already, or tried again: the record alone
    };
    if (settled) {
      try {
        plan_next();  // (not held any more: one try, else the idle look plans)
      } catch (const Error& e) {
        if (!e.retryable()) throw;
      }
    } else if (!while_held(d, plan_next) || !while_held(d, [&] { d.ack(); })) {
      return;
    }
    if (planned && !added) plan_again(queue);
  }

  const MethodInfo& method_;
  void* const owner_;
  const Schedule schedule_;
  std::string name_, queue_;
  MisfirePolicy misfire_;
  Overlap overlap_ = Overlap::skip;
  int retries_ = 0;
  milliseconds backoff_{0}, backoff_cap_{0};
  ScheduleSeries* series_ = nullptr;  // never freed
};

}  // namespace

std::shared_ptr<ScheduleServer> make_tick_server(const MethodInfo& method, void* owner) {
  return std::make_shared<TickServer>(method, owner);
}

}  // namespace weave::detail
