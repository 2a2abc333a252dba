// Natural batching of one key group's small requests into a feature's batch
// script: requests go at once while fewer than two of the group's sends are
// in flight, else they wait and go with every request that came in the
// meantime (up to 128 requests or 1 MB per script, 8 scripts pipelined in
// one round trip). Alone a request pays one round trip; under load one
// script's fixed cost and one round trip serve many, so Redis, the
// bottleneck, answers more requests per second. The delay queue sends its
// offers, takes and settles through one (src/queue/scripts/batch.lua).
//
//   store::RequestBatch batch(exec, {.body = scripts::batch, .keys = {scheduled, active},
//                                    .head = {base}, .order_prefix = base + ":o:",
//                                    .what = "queue requests", .sender_name = "weave-qsend"});
//   long long answer = 0;
//   store::RequestBatch::Request r{.kind = "settle", .args = args, .what = "queue settle",
//                                  .read = [&](const store::ReplyView& v) { answer = v.integer(); }};
//   batch.submit({&r, 1});  // returns once answered; throws r's error, if any
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.h"
#include "store/executor.h"
#include "store/reply.h"

namespace WEAVE_NAMESPACE::store {

// Requests go in arrival order; each waiting caller is woken alone (no herd
// on a shared condition).
//
// Asynchronous requests (submit_async) wait in their own line, sent by two
// sender threads, one script each, so one send fills while the other is
// answered. They still run in the order they were made: each send is
// numbered per producer (a random id), and the script runs send n only
// after n - 1, else refuses it untouched; a refused send goes again once its
// predecessor is answered (Kafka's idempotent producer keeps partition order
// the same way). If the predecessor never ran (it failed), the send moves to
// a new producer. Each asynchronous request completes on its sender's thread.
class RequestBatch {
 public:
  // The batch script and what each of its calls carries. The script's side:
  // KEYS = keys (then, for an asynchronous send, its producer's order key);
  // ARGV = head..., the number of requests, then per request its kind, its
  // argument count and its arguments. One reply element per request, in
  // order (a request that fails answers with its error). An asynchronous
  // send's first request is {"order", n, ttl ms}: the script runs only if it
  // is the producer's first send (n = 1, no key) or the key holds n - 1,
  // then stores n there for ttl and answers 1 for it; else it does nothing
  // and returns {0} (refused: sent again later), or {-1} when the key holds
  // n or more (a resend of a send that ran).
  struct Script {
    const char* body = nullptr;  // a feature's scripts/ text
    std::vector<std::string_view> keys, head;  // views: must outlive the batch
    std::string order_prefix;  // the producers' order keys: <order_prefix><id>
    const char* what = nullptr;  // names a send of several requests in errors ("queue requests")
    const char* sender_name = nullptr;  // the sender threads' name (15 characters at most)
  };

  struct Caller;
  struct Request {
    std::string_view kind;  // the script's request kinds
    std::span<const std::string_view> args;
    const char* what = nullptr;  // names the request in errors ("queue offer")
    // Reads this request's reply (its element of the script's reply).
    std::function<void(const ReplyView&)> read{};
    std::exception_ptr error{};
    bool done = false;
    Caller* caller = nullptr;
  };

  // A request that owns its arguments and is told its outcome (its read has
  // run, or `error` is set) by complete(), on the sender thread.
  struct AsyncRequest : Request {
    virtual ~AsyncRequest() = default;
    std::vector<std::string> owned;  // what `args` views
    std::vector<std::string_view> views;
    std::function<void(AsyncRequest&)> complete;
  };

  RequestBatch(Executor& exec, Script script);
  // Sends what is still waiting (nothing made is dropped), then ends the
  // sender threads.
  ~RequestBatch();
  RequestBatch(const RequestBatch&) = delete;
  RequestBatch& operator=(const RequestBatch&) = delete;

  // Queues `r` for the sender threads (started at the first call).
  void submit_async(std::unique_ptr<AsyncRequest> r);
  // Returns once every request was answered (its read ran); then throws the
  // first one's error, if any.
  void submit(std::span<Request> requests);

 private:
  // An asynchronous send's place in its producer's order (the 'order' request).
  struct Order {
    std::string key;  // <order_prefix><producer id>
    std::uint64_t number = 0;
  };

  void new_producer() WEAVE_REQUIRES(mutex_);
  // A sender thread (two run it): one script of asynchronous requests at a time.
  void send_async();
  // The requests waiting in `line`, front first, cut into scripts (at least one request).
  std::vector<std::vector<Request*>> next_scripts(std::deque<Request*>& line, std::size_t max_scripts);
  bool send(const std::vector<std::vector<Request*>>& scripts, const Order* order = nullptr) noexcept;

  Executor& exec_;
  const Script script_;
  detail::Mutex mutex_;
  std::deque<Request*> waiting_ WEAVE_GUARDED_BY(mutex_);
  int in_flight_ WEAVE_GUARDED_BY(mutex_) = 0;
  // AsyncRequests, owned from here until complete()d.
  std::deque<Request*> async_waiting_ WEAVE_GUARDED_BY(mutex_);
  std::condition_variable async_wake_, async_done_;
  std::deque<Order*> async_sends_ WEAVE_GUARDED_BY(mutex_);  // in flight, oldest first
  std::string order_key_ WEAVE_GUARDED_BY(mutex_);  // the current producer's
  std::uint64_t next_number_ WEAVE_GUARDED_BY(mutex_) = 1;
  bool stopping_ WEAVE_GUARDED_BY(mutex_) = false;
  // Started under mutex_ (submit_async); last: joined first.
  detail::OwnedThread senders_[2];
};

}  // namespace weave::store
