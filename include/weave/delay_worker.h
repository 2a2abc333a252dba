// weave/delay_worker.h — runs the calls [[delay]] stored (docs/queue.md).
//
//   class Orders {
//    public:
//     virtual ~Orders() = default;
//     [[delay(queue="orders", after=30min, retries=5, backoff=10s)]]
//     [[lock(key="order:<order_id>")]]
//     virtual void cancel_if_unpaid(const std::string& order_id);
//   };
//   weave::Woven<Orders> orders;
//   static_cast<Orders&>(orders).cancel_if_unpaid("o-1");   // stored; returns at once
//
//   weave::DelayWorker worker({.concurrency = 4});          // in any process
//   worker.serve(orders);
//   worker.run(stop_token);                                 // until stop is requested
//
// serve() also serves the object's [[scheduled]] methods (weave/tick.h):
// every worker process serving one takes its ticks, each tick runs on one of
// them.
//
// A stored call runs with the interceptors after [[delay]] (here the lock),
// as if called then, on the object given to serve(). Its delivery is a lease
// (weave/queue.h): a worker that dies mid-call loses it to another worker. A
// call that throws is a failed attempt (retried after its backoff, dead after
// its retries); one whose method's signature changed since it was stored, or
// whose arguments no longer decode, is dead-lettered at once with the reason:
// it never runs with misread arguments.
#pragma once

#include "weave/abi.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "weave/generated/stored_call.h"
#include "weave/queue.h"

namespace WEAVE_NAMESPACE {

namespace detail {
// DelayWorkerStats as the worker's threads count them.
struct WorkerCounts {
  std::atomic<std::uint64_t> ran{0}, failed{0}, rejected{0}, skipped{0};
};
class ScheduleServer;  // src/queue/schedule_server.h
}  // namespace detail

struct DelayWorkerOptions {
  // Calls of one queue run at once in this worker (threads per queue; per
  // schedule for [[scheduled]] methods: more than one lets overlap=allow
  // runs of one schedule overlap in this process).
  int concurrency = 1;
  // Stored calls a thread takes per round trip (1..1000), run one after
  // another and acknowledged together with the next take: more calls per
  // second for short methods, while a call waits behind those taken with it.
  int batch = 1;
};

struct DelayWorkerStats {
  std::uint64_t ran = 0;       // acknowledged after the method returned
  std::uint64_t failed = 0;    // threw: a failed attempt
  std::uint64_t rejected = 0;  // dead-lettered: another signature, unreadable arguments, no such method served
  std::uint64_t skipped = 0;   // an interceptor below skipped the method (acknowledged), or a
                               // [[scheduled]] tick was not run (its misfire or overlap policy)
};

class WEAVE_API DelayWorker {
 public:
  explicit DelayWorker(DelayWorkerOptions options = {});
  ~DelayWorker();
  DelayWorker(const DelayWorker&) = delete;
  DelayWorker& operator=(const DelayWorker&) = delete;

  // Serves every [[delay]] method of `woven` (a weave::Woven<T>, or an
  // interface's decorator), each from its queue, and every [[scheduled]]
  // one. `woven` must outlive run(). Throws UsageError when another object
  // already serves one of its methods or schedules, or a schedule is one
  // this build cannot run (Weave::schedule not linked).
  template <class W>
  void serve(W& woven) {
    serve_calls(stored_calls_of(woven));
  }
  void serve_calls(StoredCalls calls);

  // Takes and runs stored calls until `stop` is requested (then returns once
  // the calls running have finished). UsageError when nothing is served.
  void run(std::stop_token stop);

  DelayWorkerStats stats() const noexcept;

 private:
  struct Served {
    const MethodInfo* method;
    void* owner;
  };
  void work(const std::string& queue, std::stop_token stop);
  // Runs one stored call; true when it is to be acknowledged (it ran, or was
  // skipped), false when it was settled as failed or dead here.
  bool run_one(QueueDelivery& d, const std::map<std::string, Served, std::less<>>& methods, const std::string& queue);
  DelayWorkerOptions options_;
  // queue name -> (qualified method name -> the method and its object)
  std::map<std::string, std::map<std::string, Served, std::less<>>, std::less<>> queues_;
  // schedule name -> its server
  std::map<std::string, std::shared_ptr<detail::ScheduleServer>, std::less<>> schedules_;
  detail::WorkerCounts counts_;
};

}  // namespace WEAVE_NAMESPACE
