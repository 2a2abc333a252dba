// Delay queues on Redis (redis://, redis+cluster://, redis+sentinel://)
// through the store layer: every step is one script of src/queue/scripts/
// over the queue's keys, which share one {hash tag} (one cluster slot); the
// wake channel is in the same slot, so a cluster publishes and subscribes on
// the queue's node. Offers, takes and settles go through RequestBatch: those
// that arrive while two of the queue's sends are in flight go together in
// the next (scripts/batch.lua).
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/process.h"
#include "core/unique_token.h"
#include "queue/queue_runtime.h"
#include "queue/queue_store.h"
#include "queue/scripts.h"
#include "store/open.h"
#include "store/reply.h"
#include "weave/error.h"
#include "weave/key.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;
namespace scripts = queue_redis::scripts;

// Natural batching: requests go at once while fewer than kMaxInFlight of
// the queue's sends are in flight, else they wait and go with every request
// that came in the meantime: up to kMaxRequests (or kMaxBytes) per script,
// up to kMaxScripts scripts pipelined in one round trip. Alone a request
// pays one round trip as before; under load one script's fixed cost and one
// round trip serve many requests, so Redis, the bottleneck, delivers more
// messages per second. Requests go in arrival order; each waiting caller is
// woken alone (no herd on a shared condition).
//
// Asynchronous requests (submit_async: offer_async) wait in their own line,
// sent by two sender threads, one script each, so one send fills while the
// other is answered. They still run in the order they were made: each send
// is numbered per producer (a random id), and batch.lua runs send n only
// after n - 1, else refuses it untouched; a refused send goes again once
// its predecessor is answered (Kafka's idempotent producer keeps partition
// order the same way). If the predecessor never ran (it failed), the send
// moves to a new producer. Each request completes on its sender's thread.
class RequestBatch {
 public:
  struct Caller {
    std::condition_variable wake;
    bool lead = false;  // may send now (a send finished while it waited)
  };
  struct Request {
    std::string_view kind;  // batch.lua's request kinds
    std::span<const std::string_view> args;
    const char* what = nullptr;  // names the request in errors ("queue offer")
    // Reads this request's reply (its element of the script's reply).
    std::function<void(const store::ReplyView&)> read{};
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

  // `order_prefix`: the producers' order keys are <order_prefix><id>.
  RequestBatch(store::Executor& exec, std::vector<std::string_view> keys, std::vector<std::string_view> head,
               std::string order_prefix)
      : exec_(exec), keys_(std::move(keys)), head_(std::move(head)), order_prefix_(std::move(order_prefix)) {}

  // Sends what is still waiting (nothing made is dropped), then ends the
  // sender threads.
  ~RequestBatch() {
    {
      std::lock_guard g(mutex_);
      stopping_ = true;
    }
    async_wake_.notify_all();
    for (detail::OwnedThread& t : senders_) t.join();
  }

  void submit_async(std::unique_ptr<AsyncRequest> r) {
    {
      std::lock_guard g(mutex_);
      if (!senders_[0].running()) {
        new_producer();
        for (detail::OwnedThread& t : senders_) t = detail::OwnedThread("weave-qsend", [this] { send_async(); });
      }
      async_waiting_.push_back(r.get());
      r.release();  // owned by the line now
    }
    async_wake_.notify_one();
  }

  // Returns once every request was answered (its read ran); then throws the
  // first one's error, if any.
  void submit(std::span<Request> requests) {
    Caller me;
    std::unique_lock lock(mutex_);
    for (Request& r : requests) {
      r.caller = &me;
      waiting_.push_back(&r);
    }
    const auto all_done = [&] {
      return std::all_of(requests.begin(), requests.end(), [](const Request& r) { return r.done; });
    };
    while (!all_done()) {
      if (in_flight_ >= kMaxInFlight) {
        me.wake.wait(lock, [&] { return me.lead || all_done(); });
        me.lead = false;
        continue;
      }
      ++in_flight_;
      std::vector<std::vector<Request*>> scripts = next_scripts(waiting_);
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

 private:
  // Two: the next send fills while one is answered, so Redis seldom idles
  // on a client that is reading replies, and batches stay large (more in
  // flight made smaller batches and fewer deliveries per second).
  static constexpr int kMaxInFlight = 2;
  static constexpr std::size_t kMaxRequests = 128, kMaxBytes = 1 << 20, kMaxScripts = 8;

  // An asynchronous send's place in its producer's order (batch.lua's 'order').
  struct Order {
    std::string key;  // <order_prefix><producer id>
    std::uint64_t number = 0;
  };
  // How long a producer's order key outlives its last send: an idle producer
  // whose key ran out has its next send refused once, then moves to a new id.
  static constexpr long long kOrderKeyMs = 600'000;

  void new_producer() {
    order_key_ = order_prefix_ + detail::new_id();
    next_number_ = 1;
  }

  // A sender thread (two run it): one script of asynchronous requests at a time.
  void send_async() {
    std::unique_lock lock(mutex_);
    for (;;) {
      async_wake_.wait(lock, [&] {
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
          async_done_.wait(lock, [&] { return async_sends_.front() == &order; });
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

  // The requests waiting in `line`, front first, cut into scripts (at least one request).
  std::vector<std::vector<Request*>> next_scripts(std::deque<Request*>& line, std::size_t max_scripts = kMaxScripts) {
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

  // Runs the batch.lua calls in one round trip; every error (bad_alloc
  // included) lands in the requests, none leaves: the callers must wake.
  // With `order` (one script): false when batch.lua refused it, the
  // requests untouched (its producer's previous send has not run); when it
  // had run already (a resend after a lost answer), true with the requests
  // unread (their answers are not known, but they were done).
  bool send(const std::vector<std::vector<Request*>>& scripts, const Order* order = nullptr) noexcept {
    try {
      std::size_t requests = 0;
      for (const auto& script : scripts) requests += script.size();
      std::vector<store::NumberArg> counts;  // its views are in `calls`: never reallocated
      counts.reserve(requests + scripts.size() + 2);
      std::vector<store::ScriptCall> calls(scripts.size());
      const std::size_t first = order ? 1 : 0;  // the requests' replies after the order's
      for (std::size_t k = 0; k < scripts.size(); ++k) {
        store::ScriptCall& c = calls[k];
        c.body = scripts::batch;
        c.keys = keys_;
        c.args = head_;
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
      const char* what = requests == 1 ? scripts.front().front()->what : "queue requests";
      const std::vector<store::Reply> replies = exec_.run(calls, what);
      for (std::size_t k = 0; k < scripts.size(); ++k) {
        const store::ReplyView all(replies[k], what);
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

  store::Executor& exec_;
  const std::vector<std::string_view> keys_, head_;  // views of RedisQueue's key names
  std::mutex mutex_;
  std::deque<Request*> waiting_;
  int in_flight_ = 0;
  std::deque<Request*> async_waiting_;  // AsyncRequests, owned from here until complete()d
  std::condition_variable async_wake_, async_done_;
  std::deque<Order*> async_sends_;  // in flight, oldest first
  const std::string order_prefix_;
  std::string order_key_;  // the current producer's
  std::uint64_t next_number_ = 1;
  bool stopping_ = false;
  detail::OwnedThread senders_[2];  // last: joined first
};

class RedisQueue final : public QueueStore {
 public:
  // The name %-encoded in the keys' hash tag: a '{' or '}' in it cannot
  // reach another queue's keys or slot.
  RedisQueue(std::shared_ptr<store::Executor> exec, const std::string& prefix, std::string_view name)
      : exec_(std::move(exec)) {
    base_.append("{").append(prefix);
    append_percent_encoded(base_, name, "%{}");
    base_ += '}';
    scheduled_ = base_ + ":z";
    active_ = base_ + ":a";
    dead_ = base_ + ":d";
    counter_ = base_ + ":n";
    wake_ = base_ + ":wake";
    batch_.emplace(*exec_, std::vector<std::string_view>{scheduled_, active_, dead_, counter_},
                   std::vector<std::string_view>{base_, wake_}, base_ + ":o:");
  }

  QueueOffered offer(const QueueOffer& o) override { return offer_many({&o, 1}).front(); }

  // batch.lua's offer request's arguments, appended to `args`; `numbers`
  // holds the text of the numbers among them (reserved by the caller: its
  // elements are viewed, never reallocated).
  static constexpr std::size_t kOfferArgs = 6, kOfferNumbers = 4;
  static void offer_args(const QueueOffer& o, std::vector<store::NumberArg>& numbers,
                         std::vector<std::string_view>& args) {
    args.push_back(o.id);
    args.push_back(o.payload);
    for (long long n : {static_cast<long long>(o.delay.count()), static_cast<long long>(o.retries),
                        static_cast<long long>(o.backoff.count()), static_cast<long long>(o.backoff_cap.count())})
      args.push_back(numbers.emplace_back(n).view());
  }

  std::vector<QueueOffered> offer_many(std::span<const QueueOffer> offers) override {
    std::vector<store::NumberArg> numbers;
    numbers.reserve(offers.size() * kOfferNumbers);
    std::vector<std::string_view> args;
    args.reserve(offers.size() * kOfferArgs);
    for (const QueueOffer& o : offers) offer_args(o, numbers, args);
    std::vector<QueueOffered> out(offers.size());
    std::vector<RequestBatch::Request> requests(offers.size());
    for (std::size_t i = 0; i < offers.size(); ++i)
      requests[i] = {.kind = "offer",
                     .args = std::span(args).subspan(i * kOfferArgs, kOfferArgs),
                     .what = "queue offer",
                     .read = [&out, i](const store::ReplyView& r) { out[i] = read_offered(r); }};
    batch_->submit(requests);
    return out;
  }

  void offer_async(const QueueOffer& o, std::function<void(QueueOffered, std::exception_ptr)> done) override {
    struct AsyncOffer final : RequestBatch::AsyncRequest {
      QueueOffered offered{true};  // (kept when the send turns out to have run already)
    };
    auto r = std::make_unique<AsyncOffer>();
    std::vector<store::NumberArg> numbers;
    numbers.reserve(kOfferNumbers);
    std::vector<std::string_view> args;
    offer_args(o, numbers, args);
    r->owned.assign(args.begin(), args.end());  // (sent after this returns)
    r->views.assign(r->owned.begin(), r->owned.end());
    r->kind = "offer";
    r->args = r->views;
    r->what = "queue offer";
    r->read = [self = r.get()](const store::ReplyView& reply) { self->offered = read_offered(reply); };
    r->complete = [done = std::move(done)](RequestBatch::AsyncRequest& a) {
      done(static_cast<AsyncOffer&>(a).offered, a.error);
    };
    batch_->submit_async(std::move(r));
  }

  QueueTaken take(milliseconds lease, double jitter, std::size_t max) override {
    return ack_and_take({}, lease, jitter, max).taken;
  }

  // One "settle ... ack" request per delivery, then one take: sent together,
  // so in one script (or scripts pipelined in one round trip), in order.
  AckedAndTaken ack_and_take(std::span<const Held> done, milliseconds lease, double jitter,
                             std::size_t max) override {
    const store::NumberArg ms(lease.count()), j(jitter), n(max);
    std::vector<store::NumberArg> tokens;  // its views are in `args`: never reallocated
    tokens.reserve(done.size());
    constexpr std::size_t kAckArgs = 5;
    std::vector<std::string_view> args;
    args.reserve(done.size() * kAckArgs + 4);
    for (const Held& d : done) {
      args.insert(args.end(), {d.id, tokens.emplace_back(d.token).view(), action_name(SettleAction::ack), "", j.view()});
    }
    const std::string request_id = take_id();
    args.insert(args.end(), {ms.view(), j.view(), n.view(), request_id});
    AckedAndTaken out;
    out.acked.resize(done.size());
    out.errors.resize(done.size());
    std::vector<RequestBatch::Request> requests(done.size() + 1);
    for (std::size_t i = 0; i < done.size(); ++i)
      requests[i] = {.kind = "settle",
                     .args = std::span(args).subspan(i * kAckArgs, kAckArgs),
                     .what = "queue ack",
                     .read = [&out, i](const store::ReplyView& r) { out.acked[i] = settled_of(r.integer()); }};
    requests.back() = {.kind = "take",
                       .args = std::span(args).subspan(done.size() * kAckArgs),
                       .what = done.empty() ? "queue take" : "queue ack and take",
                       .read = [&out](const store::ReplyView& r) { out.taken = read_taken(r); }};
    try {
      batch_->submit(requests);
    } catch (...) {
      if (requests.back().error) {  // the take's own error (or the round trip's)
        if (may_have_run(requests.back().error)) {
          std::lock_guard g(unanswered_mutex_);
          unanswered_take_ = request_id;
        }
        throw;
      }
    }
    for (std::size_t i = 0; i < done.size(); ++i)  // an ack's error is its answer
      if (requests[i].error) {
        out.acked[i] = Settled::failed;
        try {
          std::rethrow_exception(requests[i].error);
        } catch (const std::exception& e) {
          out.errors[i] = e.what();
        } catch (...) {
          out.errors[i] = "an unknown error";
        }
      }
    return out;
  }

  Settled settle(std::string_view id, std::uint64_t token, SettleAction action, milliseconds delay,
                 std::string_view reason, double jitter) override {
    const store::NumberArg tok(token), ms(delay.count()), j(jitter);
    const std::string_view args[] = {id, tok.view(), action_name(action), settle_value(action, ms, reason), j.view()};
    Settled out = Settled::gone;
    submit("settle", args, "queue settle", [&](const store::ReplyView& r) { out = settled_of(r.integer()); });
    return out;
  }

  std::vector<bool> renew(std::span<const Held> items, milliseconds lease) override {
    const store::NumberArg ms(lease.count());
    std::vector<std::string> tokens;
    tokens.reserve(items.size());
    std::vector<std::string_view> args{ms.view()};
    for (const Held& r : items) tokens.push_back(std::to_string(r.token));
    for (std::size_t i = 0; i < items.size(); ++i) {
      args.push_back(items[i].id);
      args.push_back(tokens[i]);
    }
    const store::Reply reply = run(scripts::renew, {}, args, "queue renew");
    const store::ReplyView r(reply, "queue renew");
    std::vector<bool> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(r[i].integer() == 1);
    return out;
  }

  Edited edit(std::string_view id, EditAction action, milliseconds delay) override {
    static constexpr std::string_view names[] = {"cancel", "reschedule", "requeue"};
    const std::string key = message_key(id);
    const store::NumberArg ms(delay.count());
    const store::Reply reply = run(scripts::edit, key, {id, names[static_cast<int>(action)], ms.view()}, "queue edit");
    switch (store::ReplyView(reply, "queue edit").integer()) {
      case 1: return Edited::done;
      case 0: return Edited::wrong_state;
      default: return Edited::absent;
    }
  }

  QueueCounts counts(double jitter) override {
    const store::NumberArg j(jitter);
    const store::Reply reply = run(scripts::counts, {}, {j.view()}, "queue counts");
    const store::ReplyView r(reply, "queue counts");
    QueueCounts c{static_cast<std::uint64_t>(r[0].integer()), static_cast<std::uint64_t>(r[1].integer()),
                  static_cast<std::uint64_t>(r[2].integer()), static_cast<std::uint64_t>(r[3].integer()), {}};
    c.dead_lettered = texts(r[5]);
    return c;
  }

  QueueMessageState inspect(std::string_view id) override {
    const std::string key = message_key(id);
    const store::Reply reply = run(scripts::inspect, key, {}, "queue inspect");
    const store::ReplyView r(reply, "queue inspect");
    QueueMessageState s;
    if (r.size() == 0) return s;
    s.state = r[0].text().empty() ? 0 : r[0].text()[0];
    s.due_ms = r[1].integer();
    s.deliveries = static_cast<int>(r[2].integer());
    s.failures = static_cast<int>(r[3].integer());
    s.last_error = r[4].text();
    s.now_ms = r[5].integer();
    return s;
  }

  std::uint64_t purge_dead() override {
    std::uint64_t total = 0;
    for (;;) {
      const store::Reply reply = run(scripts::purge, {}, {}, "queue purge");
      const long long n = store::ReplyView(reply, "queue purge").integer();
      total += static_cast<std::uint64_t>(n);
      if (n < 500) return total;
    }
  }

  std::vector<QueueListed> list(char state, std::size_t limit) override {
    const std::string which(1, state);
    const store::NumberArg n(limit);
    const store::Reply reply = run(scripts::list, {}, {which, n.view()}, "queue list");
    const store::ReplyView r(reply, "queue list");
    std::vector<QueueListed> out;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const store::ReplyView m = r[i];
      if (m.size() != 6) m.unexpected();
      out.push_back({std::string(m[0].text()), std::string(m[5].text()), std::string(m[4].text()), m[1].integer(),
                     static_cast<int>(m[2].integer()), static_cast<int>(m[3].integer())});
    }
    return out;
  }

  void wake() override { exec_->publish(wake_, "0"); }

  std::unique_ptr<QueueWaiter> prepare_wait() override {
    return std::make_unique<store::SubscriptionWaiter<QueueWaiter>>(exec_, wake_);
  }

 private:
  static std::string_view action_name(SettleAction action) {
    static constexpr std::string_view names[] = {"ack", "retry", "fail", "dead"};
    return names[static_cast<int>(action)];
  }
  // retry: its delay; fail and dead: the reason.
  static std::string_view settle_value(SettleAction action, const store::NumberArg& delay, std::string_view reason) {
    return action == SettleAction::retry ? delay.view() : reason;
  }
  static Settled settled_of(long long answer) {
    switch (answer) {
      case 1: return Settled::done;
      case 2: return Settled::dead;
      case 0: return Settled::taken_back;
      case -1: return Settled::gone;
      default: return Settled::absent;
    }
  }
  static std::vector<std::string> texts(const store::ReplyView& list) {
    std::vector<std::string> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) out.emplace_back(list[i].text());
    return out;
  }

  // A take whose answer never came (an IoError: it may have run and leased
  // messages to nobody) leaves its request id to this queue's next take in
  // this process, which gets what it delivered (batch.lua keeps it for the
  // lease); one take only.
  std::string take_id() {
    {
      std::lock_guard g(unanswered_mutex_);
      if (!unanswered_take_.empty()) return std::exchange(unanswered_take_, std::string());
    }
    return detail::unique_token();
  }
  static bool may_have_run(const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const IoError&) {
      return true;
    } catch (...) {
      return false;
    }
  }

  // A take's replies (take_due()'s, scripts/_queue.lua): the delivered
  // messages, then one "nothing due" if fewer than asked; reclaim()'s
  // dead-lettered ids may follow the first's fields.
  static QueueTaken read_taken(const store::ReplyView& all) {
    QueueTaken out;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const store::ReplyView r = all[i];
      out.now_ms = r[1].integer();
      const bool delivered = r[0].integer() != 0;
      if (i == 0 && r.size() > (delivered ? 10u : 3u)) out.dead_lettered = texts(r[delivered ? 10 : 3]);
      if (!delivered) {
        out.next_ms = r[2].integer();
        break;
      }
      QueueMessage& m = out.messages.emplace_back();
      m.id = r[2].text();
      m.payload = r[3].text();
      m.token = static_cast<std::uint64_t>(r[4].integer());
      m.due_ms = r[5].integer();
      m.now_ms = out.now_ms;
      m.deliveries = static_cast<int>(r[6].integer());
      m.failures = static_cast<int>(r[7].integer());
      m.retries = static_cast<int>(r[8].integer());
      m.last_error = r[9].text();
    }
    return out;
  }

  void submit(std::string_view kind, std::span<const std::string_view> args, const char* what,
              std::function<void(const store::ReplyView&)> read) {
    RequestBatch::Request r{.kind = kind, .args = args, .what = what, .read = std::move(read)};
    batch_->submit({&r, 1});
  }
  static QueueOffered read_offered(const store::ReplyView& r) {
    return {r.integer() == 1};
  }

  std::string message_key(std::string_view id) const {
    std::string k;
    k.reserve(base_.size() + 3 + id.size());
    k.append(base_).append(":m:").append(id);
    return k;
  }
  // One script over the queue's keys (+ `message` when not empty); the args
  // after {base, wake}.
  store::Reply run(const char* body, std::string_view message, std::initializer_list<std::string_view> args,
                   const char* what) {
    return run(body, message, std::vector<std::string_view>(args), what);
  }
  store::Reply run(const char* body, std::string_view message, const std::vector<std::string_view>& args,
                   const char* what) {
    std::vector<store::ScriptCall> calls(1);
    store::ScriptCall& c = calls.front();
    c.body = body;
    c.keys = {scheduled_, active_, dead_, counter_};
    if (!message.empty()) c.keys.push_back(message);
    c.args.reserve(args.size() + 2);
    c.args.push_back(base_);
    c.args.push_back(wake_);
    c.args.insert(c.args.end(), args.begin(), args.end());
    return std::move(exec_->run(calls, what).front());
  }

  std::shared_ptr<store::Executor> exec_;
  std::string base_, scheduled_, active_, dead_, counter_, wake_;
  std::mutex unanswered_mutex_;
  std::string unanswered_take_;  // take_id()
  std::optional<RequestBatch> batch_;  // made once the key names above are set
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for queues when Weave::queue_redis is linked:
// its static targets name weave_link_queue_redis (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_queue_redis = 0;
namespace {
[[maybe_unused]] const bool queue_redis_registered = [] {
  for (const char* scheme : store::executor_schemes)
    detail::register_queue_store(scheme, [](const QueueOptions& o) {
      auto exec = store::open_executor(o.url, store::connection_settings(o));
      return [exec, prefix = o.key_prefix](std::string_view name) -> std::shared_ptr<detail::QueueStore> {
        return std::make_shared<detail::RedisQueue>(exec, prefix, name);
      };
    });
  return true;
}();
}  // namespace
}  // namespace weave
