#include "store/request_batch.h"

#include <algorithm>
#include <utility>

#include "core/unique_token.h"

namespace WEAVE_NAMESPACE::store {
namespace {

// Two in flight: the next send fills while one is answered, so Redis seldom
// idles on a client that is reading replies, and batches stay large (more in
// flight made smaller batches and fewer deliveries per second).
constexpr int kMaxInFlight = 2;
constexpr std::size_t kMaxRequests = 128, kMaxBytes = 1 << 20, kMaxScripts = 8;
// How long a producer's order key outlives its last send: an idle producer
// whose key ran out has its next send refused once, then moves to a new id.
constexpr long long kOrderKeyMs = 600'000;

}  // namespace

// A Caller's and a Request's state (lead, done, error) are guarded by the
// batch's mutex_, which the analysis cannot name from here.
struct RequestBatch::Caller {
  std::condition_variable wake;
  bool lead = false;  // may send now (a send finished while it waited)
};

RequestBatch::RequestBatch(Executor& exec, Script script) : exec_(exec), script_(std::move(script)) {}

RequestBatch::~RequestBatch() {
  {
    detail::Guard g(mutex_);
    stopping_ = true;
  }
  async_wake_.notify_all();
  for (detail::OwnedThread& t : senders_) t.join();
}

void RequestBatch::submit_async(std::unique_ptr<AsyncRequest> r) {
  {
    detail::Guard g(mutex_);
    if (!senders_[0].running()) {
      new_producer();
      for (detail::OwnedThread& t : senders_) t = detail::OwnedThread(script_.sender_name, [this] { send_async(); });
    }
    async_waiting_.push_back(r.get());
    r.release();  // owned by the line now
  }
  async_wake_.notify_one();
}

void RequestBatch::submit(std::span<Request> requests) {
  Caller me;
  detail::Guard lock(mutex_);
  for (Request& r : requests) {
    r.caller = &me;
    waiting_.push_back(&r);
  }
  const auto all_done = [&] {
    return std::all_of(requests.begin(), requests.end(), [](const Request& r) { return r.done; });
  };
  while (!all_done()) {
    if (in_flight_ >= kMaxInFlight) {
      mutex_.wait(me.wake, [&] { return me.lead || all_done(); });
      me.lead = false;
      continue;
    }
    ++in_flight_;
    std::vector<std::vector<Request*>> scripts = next_scripts(waiting_, kMaxScripts);
    lock.unlock();
    send(scripts);
    lock.lock();
    --in_flight_;
    for (const auto& script : scripts)
      for (Request* q : script) {
        q->done = true;
        if (q->caller != &me) q->caller->wake.notify_one();
      }
    if (!waiting_.empty() && waiting_.front()->caller != &me) {  // the next send's sender
      waiting_.front()->caller->lead = true;
      waiting_.front()->caller->wake.notify_one();
    }
  }
  for (const Request& r : requests)
    if (r.error) std::rethrow_exception(r.error);
}

void RequestBatch::new_producer() {
  order_key_ = script_.order_prefix + detail::unique_token();
  next_number_ = 1;
}

void RequestBatch::send_async() {
  detail::Guard lock(mutex_);
  for (;;) {
    mutex_.wait(async_wake_, [&]() WEAVE_REQUIRES(mutex_) {
      return (stopping_ && async_waiting_.empty()) || (!async_waiting_.empty() && async_sends_.size() < 2);
    });
    if (async_waiting_.empty()) return;  // stopping, and all sent
    std::vector<std::vector<Request*>> script = next_scripts(async_waiting_, 1);
    Order order{order_key_, next_number_++};  // changed only under the lock (a move to a new producer)
    async_sends_.push_back(&order);
    for (;;) {
      const bool oldest = async_sends_.front() == &order;  // the previous send was answered
      const Order sent = order;
      lock.unlock();
      const bool ran = send(script, &sent);
      lock.lock();
      if (ran) break;
      if (order.key != sent.key || order.number != sent.number) continue;  // renumbered meanwhile
      if (!oldest) {  // refused: go again once the previous send is answered
        mutex_.wait(async_done_, [&]() WEAVE_REQUIRES(mutex_) { return async_sends_.front() == &order; });
        continue;
      }
      // Refused with nothing before it: the previous send never ran. This
      // one and every later one in flight move to a new producer, in order.
      new_producer();
      for (Order* o : async_sends_) *o = {order_key_, next_number_++};
    }
    async_sends_.erase(std::find(async_sends_.begin(), async_sends_.end(), &order));
    async_done_.notify_all();
    lock.unlock();
    for (Request* r : script.front()) {
      std::unique_ptr<AsyncRequest> a(static_cast<AsyncRequest*>(r));
      try {
        a->complete(*a);
      } catch (...) {
        // (complete() must not throw; one that does loses only its own answer)
      }
    }
    lock.lock();
  }
}

std::vector<std::vector<RequestBatch::Request*>> RequestBatch::next_scripts(std::deque<Request*>& line,
                                                                            std::size_t max_scripts) {
  std::vector<std::vector<Request*>> scripts;
  std::size_t bytes = 0;
  while (!line.empty()) {
    Request* r = line.front();
    std::size_t size = 0;
    for (std::string_view a : r->args) size += a.size();
    if (scripts.empty() || scripts.back().size() == kMaxRequests || bytes + size > kMaxBytes) {
      if (scripts.size() == max_scripts) break;
      scripts.emplace_back();
      bytes = 0;
    }
    bytes += size;
    scripts.back().push_back(r);
    line.pop_front();
  }
  return scripts;
}

// Runs the scripts in one round trip; every error (bad_alloc included) lands
// in the requests, none leaves: the callers must wake. With `order` (one
// script): false when the script refused it, the requests untouched (its
// producer's previous send has not run); when it had run already (a resend
// after a lost answer), true with the requests unread (their answers are not
// known, but they were done).
bool RequestBatch::send(const std::vector<std::vector<Request*>>& scripts, const Order* order) noexcept {
  try {
    std::size_t requests = 0;
    for (const auto& script : scripts) requests += script.size();
    std::vector<NumberArg> counts;  // its views are in `calls`: never reallocated
    counts.reserve(requests + scripts.size() + 2);
    std::vector<ScriptCall> calls(scripts.size());
    const std::size_t first = order ? 1 : 0;  // the requests' replies after the order's
    for (std::size_t k = 0; k < scripts.size(); ++k) {
      ScriptCall& c = calls[k];
      c.body = script_.body;
      c.keys = script_.keys;
      c.args = script_.head;
      c.args.push_back(counts.emplace_back(scripts[k].size() + first).view());
      if (order) {
        c.keys.push_back(order->key);
        c.args.insert(c.args.end(), {"order", "2", counts.emplace_back(order->number).view(),
                                     counts.emplace_back(kOrderKeyMs).view()});
      }
      for (Request* r : scripts[k]) {
        c.args.push_back(r->kind);
        c.args.push_back(counts.emplace_back(r->args.size()).view());
        c.args.insert(c.args.end(), r->args.begin(), r->args.end());
      }
    }
    const char* what = requests == 1 ? scripts.front().front()->what : script_.what;
    const std::vector<Reply> replies = exec_.run(calls, what);
    for (std::size_t k = 0; k < scripts.size(); ++k) {
      const ReplyView all(replies[k], what);
      if (order && all[0].integer() == 0) return false;
      if (order && all[0].integer() < 0) return true;
      for (std::size_t i = 0; i < scripts[k].size(); ++i) {
        Request& r = *scripts[k][i];
        try {
          r.read(all[i + first].renamed(r.what));
        } catch (...) {
          r.error = std::current_exception();
        }
      }
    }
  } catch (...) {
    for (const auto& script : scripts)
      for (Request* r : script)
        if (!r->error) r->error = std::current_exception();
  }
  return true;
}

}  // namespace weave::store
