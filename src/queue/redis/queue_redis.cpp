// Delay queues on Redis (redis://, redis+cluster://, redis+sentinel://)
// through the store layer: every step is one script of src/queue/scripts/
// over the queue's keys, which share one {hash tag} (one cluster slot); the
// wake channel is in the same slot, so a cluster publishes and subscribes on
// the queue's node. Offers, takes and settles go through a
// store::RequestBatch (store/request_batch.h): those that arrive while two
// of the queue's sends are in flight go together in the next, as requests of
// scripts/batch.lua.
#include <algorithm>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/glob.h"
#include "core/unique_token.h"
#include "queue/queue_runtime.h"
#include "queue/queue_store.h"
#include "queue/scripts.h"
#include "store/open.h"
#include "store/request_batch.h"
#include "store/reply.h"
#include "weave/error.h"
#include "weave/key.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;
namespace scripts = queue_redis::scripts;

class RedisQueue final : public QueueStore {
 public:
  // The name %-encoded in the keys' hash tag: a '{' or '}' in it cannot
  // reach another queue's keys or slot.
  RedisQueue(std::shared_ptr<store::Executor> exec, const std::string& prefix, std::string_view name)
      : exec_(std::move(exec)), prefix_(prefix) {
    base_.append("{").append(prefix);
    append_percent_encoded(base_, name, "%{}");
    base_ += '}';
    scheduled_ = base_ + ":z";
    active_ = base_ + ":a";
    dead_ = base_ + ":d";
    counter_ = base_ + ":n";
    wake_ = base_ + ":wake";
    batch_.emplace(*exec_, store::RequestBatch::Script{.body = scripts::batch,
                                                      .keys = {scheduled_, active_, dead_, counter_},
                                                      .head = {base_, wake_},
                                                      .order_prefix = base_ + ":o:",
                                                      .what = "queue requests",
                                                      .sender_name = "weave-qsend"});
  }

  QueueOffered offer(const QueueOffer& o) override { return offer_many({&o, 1}).front(); }

  // batch.lua's offer request's arguments, appended to `args` (a tick's
  // four or five more at the end); `numbers` holds the text of the numbers among
  // them (reserved by the caller: its elements are viewed, never
  // reallocated). Returns how many it appended.
  static constexpr std::size_t kOfferArgs = 11, kOfferNumbers = 7;
  static std::size_t offer_args(const QueueOffer& o, std::vector<store::NumberArg>& numbers,
                                std::vector<std::string_view>& args) {
    const std::size_t before = args.size();
    args.push_back(o.id);
    args.push_back(o.payload);
    for (long long n : {static_cast<long long>(o.delay.count()), static_cast<long long>(o.retries),
                        static_cast<long long>(o.backoff.count()), static_cast<long long>(o.backoff_cap.count())})
      args.push_back(numbers.emplace_back(n).view());
    if (!o.schedule.empty()) {
      args.push_back(o.schedule);
      args.push_back(numbers.emplace_back(static_cast<long long>(o.tick_ms)).view());
      args.push_back(numbers.emplace_back(o.missed).view());
      args.push_back(o.last_run);
      if (o.if_last_tick) args.push_back(numbers.emplace_back(static_cast<long long>(*o.if_last_tick)).view());
    }
    return args.size() - before;
  }

  std::vector<QueueOffered> offer_many(std::span<const QueueOffer> offers) override {
    std::vector<store::NumberArg> numbers;
    numbers.reserve(offers.size() * kOfferNumbers);
    std::vector<std::string_view> args;
    args.reserve(offers.size() * kOfferArgs);
    std::vector<std::size_t> counts;  // each offer's arguments
    counts.reserve(offers.size());
    for (const QueueOffer& o : offers) counts.push_back(offer_args(o, numbers, args));
    std::vector<QueueOffered> out(offers.size());
    std::vector<store::RequestBatch::Request> requests(offers.size());
    for (std::size_t i = 0, at = 0; i < offers.size(); at += counts[i], ++i)
      requests[i] = {.kind = "offer",
                     .args = std::span(args).subspan(at, counts[i]),
                     .what = "queue offer",
                     .read = [&out, i](const store::ReplyView& r) { out[i] = read_offered(r); }};
    batch_->submit(requests);
    return out;
  }

  void offer_async(const QueueOffer& o, std::function<void(QueueOffered, std::exception_ptr)> done) override {
    struct AsyncOffer final : store::RequestBatch::AsyncRequest {
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
    r->complete = [done = std::move(done)](store::RequestBatch::AsyncRequest& a) {
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
    std::vector<store::RequestBatch::Request> requests(done.size() + 1);
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
          detail::Guard g(unanswered_mutex_);
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

  QueueTicks ticks(std::string_view schedule) override {
    const store::Reply reply = run(scripts::ticks, {}, {schedule}, "queue ticks");
    const store::ReplyView r(reply, "queue ticks");
    return {r[0].integer(), r[1].integer(), static_cast<std::uint64_t>(r[2].integer()), std::string(r[3].text()),
            static_cast<std::uint64_t>(r[4].integer()), r[5].integer() == 1};
  }

  void pause_schedule(std::string_view schedule, bool paused) override {
    run(scripts::pause, {}, {schedule, paused ? "1" : "0"}, "queue pause schedule");
  }

  // Every "{<prefix><name>}:ticks" of the store (each master), the name
  // %-decoded as the constructor encoded it.
  std::vector<std::string> ticking_queues() override {
    const std::string head = "{" + prefix_, tail = "}:ticks";
    std::vector<std::string> names;
    store::scan_keys(*exec_, "{" + glob_literal(prefix_) + "*" + tail, [&](const std::vector<std::string>& page) {
      for (const std::string& key : page) {
        if (!key.starts_with(head) || !key.ends_with(tail) || key.size() < head.size() + tail.size()) continue;
        if (std::optional<std::string> name =
                percent_decoded(std::string_view(key).substr(head.size(), key.size() - head.size() - tail.size())))
          names.push_back(std::move(*name));
      }
    }, "queue list schedules");
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());  // (a resharding cluster may list a key twice)
    return names;
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
      detail::Guard g(unanswered_mutex_);
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
    store::RequestBatch::Request r{.kind = kind, .args = args, .what = what, .read = std::move(read)};
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
  std::string prefix_;
  std::string base_, scheduled_, active_, dead_, counter_, wake_;
  detail::Mutex unanswered_mutex_;
  std::string unanswered_take_ WEAVE_GUARDED_BY(unanswered_mutex_);  // take_id()
  std::optional<store::RequestBatch> batch_;  // made once the key names above are set
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
