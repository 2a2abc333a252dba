// DelayWorker (weave/delay_worker.h): per queue served, `concurrency`
// threads take stored calls and run them through core's run_stored_call;
// per schedule, as many run its ScheduleServer (src/schedule/).
#include "weave/delay_worker.h"

#include <exception>
#include <mutex>
#include <thread>

#include "core/option_check.h"
#include "core/process.h"
#include "queue/delay_call.h"
#include "queue/schedule_server.h"
#include "weave/annotation.h"
#include "weave/error.h"
#include "weave/json_codec.h"
#include "weave/queue.h"

namespace WEAVE_NAMESPACE {

namespace {
// How long one take waits before it looks again: an idle worker's one
// request per queue per this long (a stop wakes it at once).
constexpr std::chrono::milliseconds kTakeWait{30'000};
}  // namespace

DelayWorker::DelayWorker(DelayWorkerOptions options) : options_(options) {
  const detail::OptionCheck check("DelayWorkerOptions");
  check.count("concurrency", options_.concurrency, 1, 1024);
  check.count("batch", options_.batch, 1, 1000);
}

DelayWorker::~DelayWorker() = default;

namespace detail {
namespace {
std::atomic<ScheduleServerFactory>& schedule_factory() noexcept {
  static std::atomic<ScheduleServerFactory> factory{nullptr};
  return factory;
}
}  // namespace

void register_schedule_server(ScheduleServerFactory factory) { schedule_factory().store(factory); }
ScheduleServerFactory schedule_server_factory() noexcept { return schedule_factory().load(); }
}  // namespace detail

void DelayWorker::serve_calls(StoredCalls calls) {
  for (const MethodInfo* m : calls.methods) {
    const AnnotationSpec& spec = m->annotations[m->stored_call->annotation];
    if (spec.name == "scheduled") {
      const detail::ScheduleServerFactory make = detail::schedule_server_factory();
      if (!make)
        throw UsageError("DelayWorker: " + std::string(m->qualified_name) +
                         " is [[scheduled]], but Weave::schedule, which runs schedules, is not linked");
      std::shared_ptr<detail::ScheduleServer> server = make(*m, calls.owner);
      if (schedules_.contains(server->name()))
        throw UsageError("DelayWorker: schedule '" + server->name() + "' (" + std::string(m->qualified_name) +
                         ") is served already");
      schedules_.emplace(server->name(), std::move(server));
      continue;
    }
    const Annotation a(spec, {});
    const std::string queue = a.has("queue") ? std::string(a.text("queue")) : std::string(m->qualified_name);
    auto& methods = queues_[queue];
    auto [it, added] = methods.try_emplace(std::string(m->qualified_name), Served{m, calls.owner});
    if (!added && it->second.owner != calls.owner)
      throw UsageError("DelayWorker: " + std::string(m->qualified_name) + " of queue '" + queue +
                       "' is served by another object already");
  }
}

void DelayWorker::run(std::stop_token stop) {
  if (queues_.empty() && schedules_.empty())
    throw UsageError("DelayWorker::run: nothing served (call serve() with a woven object first)");
  // One token for every thread: the caller's stop, or the first thread's
  // failure (a configuration error: the others stop and run() throws it).
  std::stop_source all;
  const std::stop_callback forward(stop, [&all] { all.request_stop(); });
  struct {
    detail::Mutex mutex;
    std::exception_ptr first WEAVE_GUARDED_BY(mutex);
  } failed;
  {
    std::vector<std::jthread> threads;
    auto start = [&](auto body, const char* name) {
      threads.emplace_back([&, body] {
        try {
          body(all.get_token());
        } catch (...) {
          detail::Guard g(failed.mutex);
          if (!failed.first) failed.first = std::current_exception();
          all.request_stop();
        }
      });
      detail::name_thread(threads.back().native_handle(), name);
    };
    for (const auto& entry : queues_)
      for (int i = 0; i < options_.concurrency; ++i)
        start([this, queue = &entry.first](std::stop_token s) { work(*queue, s); }, "weave-delay");
    for (const auto& entry : schedules_)
      for (int i = 0; i < options_.concurrency; ++i)
        start([this, server = entry.second.get()](std::stop_token s) { server->work(s, counts_); }, "weave-tick");
  }  // joined: the calls running have finished
  const detail::Guard g(failed.mutex);
  if (failed.first) std::rethrow_exception(failed.first);
}

void DelayWorker::work(const std::string& name, std::stop_token stop) {
  Queue queue(name);
  const auto& methods = queues_.at(name);
  const auto batch = static_cast<std::size_t>(options_.batch);
  std::vector<QueueDelivery> taken;
  while (!stop.stop_requested()) {
    try {
      if (taken.empty()) taken = queue.take_many_json(batch, kTakeWait, stop);
      // All of them, even once stopped: each taken call runs (or is settled) before the worker ends.
      for (auto it = taken.begin(); it != taken.end();) {
        try {
          run_one(*it, methods, name);  // settles what failed; the ack of the rest goes with the next take
        } catch (const DeliveryLost&) {
          // taken back while it ran (its lease was lost): the queue runs it again elsewhere
        } catch (const Error& e) {
          if (!e.retryable()) throw;
          // Its failure could not be recorded (the store is away): never acked,
          // dropped (one more try to record it), else taken back after its lease.
          it = taken.erase(it);
          continue;
        }
        ++it;
      }
      // The acks and the next take in one round trip (once stopped: the acks alone).
      taken = queue.ack_and_take_many(taken, batch, kTakeWait, stop);
    } catch (const Error& e) {
      if (!e.retryable()) throw;
      taken.clear();  // not settled: their leases run out and the queue takes them back
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the store is away: it comes back
    }
  }
}

bool DelayWorker::run_one(QueueDelivery& d, const std::map<std::string, Served, std::less<>>& methods,
                          const std::string& name) {
  detail::DelayCall call;
  if (!detail::decode_delay_call(d.payload(), call)) {
    ++counts_.rejected;
    d.dead(detail::json_deeper_than(d.payload(), detail::kMaxJsonDepth)
               ? "not a stored [[delay]] call: its JSON nests more than " + std::to_string(detail::kMaxJsonDepth) +
                     " levels deep"
               : std::string("not a stored [[delay]] call (written by something else?)"));
    return false;
  }
  auto it = methods.find(call.method);
  if (it == methods.end()) {
    ++counts_.rejected;
    d.dead("no method " + call.method + " is served from queue '" + name + "' by this worker");
    return false;
  }
  bool ran = false;
  try {
    ran = detail::run_stored_call(*it->second.method, it->second.owner, call.signature_hash, call.args);
  } catch (const StoredCallRejected& e) {
    ++counts_.rejected;
    d.dead(e.what());
    return false;
  } catch (const std::exception& e) {
    ++counts_.failed;
    d.fail(e.what());
    return false;
  } catch (...) {
    ++counts_.failed;
    d.fail("a non-standard exception");
    return false;
  }
  ++(ran ? counts_.ran : counts_.skipped);
  return true;
}

DelayWorkerStats DelayWorker::stats() const noexcept {
  return {counts_.ran.load(), counts_.failed.load(), counts_.rejected.load(), counts_.skipped.load()};
}

}  // namespace weave
