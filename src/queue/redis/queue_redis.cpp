// Delay queues on Redis (redis://, redis+cluster://, redis+sentinel://)
// through the store layer: every step is one script of src/queue/scripts/
// over the queue's keys, which share one {hash tag} (one cluster slot); the
// wake channel is in the same slot, so a cluster publishes and subscribes on
// the queue's node.
#include <string>

#include "queue/queue_runtime.h"
#include "queue/queue_store.h"
#include "queue/scripts.h"
#include "store/open.h"
#include "store/reply.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;
namespace scripts = queue_redis::scripts;

class RedisQueue final : public QueueStore {
 public:
  RedisQueue(std::shared_ptr<store::Executor> exec, const std::string& prefix, std::string_view name)
      : exec_(std::move(exec)), base_("{" + prefix + std::string(name) + "}") {
    scheduled_ = base_ + ":z";
    active_ = base_ + ":a";
    dead_ = base_ + ":d";
    counter_ = base_ + ":n";
    wake_ = base_ + ":wake";
  }

  QueueOffered offer(const QueueOffer& o) override {
    const std::string key = message_key(o.id);
    const store::NumberArg delay(o.delay.count()), retries(o.retries), backoff(o.backoff.count()),
        cap(o.backoff_cap.count());
    const store::Reply reply =
        run(scripts::offer, key, {o.id, o.payload, delay.view(), retries.view(), backoff.view(), cap.view()}, "queue offer");
    const store::ReplyView r(reply, "queue offer");
    return {r[0].integer() == 1, r[1].integer(), r[2].integer()};
  }

  QueueTaken take(milliseconds lease, double jitter) override {
    const store::NumberArg ms(lease.count()), j(jitter);
    const store::Reply reply = run(scripts::take, {}, {ms.view(), j.view()}, "queue take");
    return read_taken(store::ReplyView(reply, "queue take"));
  }

  SettledAndTaken settle_and_take(std::string_view id, std::uint64_t token, SettleAction action, milliseconds delay,
                                  std::string_view reason, double jitter, milliseconds lease) override {
    const std::string key = message_key(id);
    const store::NumberArg tok(token), ms(delay.count()), j(jitter), lease_ms(lease.count());
    const store::Reply reply = run(scripts::settle_take, key,
                                   {id, tok.view(), action_name(action), settle_value(action, ms, reason), j.view(),
                                    lease_ms.view()},
                                   "queue settle and take");
    const store::ReplyView r(reply, "queue settle and take");
    return {settled_of(r[0].integer()), read_taken(r[1])};
  }

  Settled settle(std::string_view id, std::uint64_t token, SettleAction action, milliseconds delay,
                 std::string_view reason, double jitter) override {
    const std::string key = message_key(id);
    const store::NumberArg tok(token), ms(delay.count()), j(jitter);
    const store::Reply reply =
        run(scripts::settle, key, {id, tok.view(), action_name(action), settle_value(action, ms, reason), j.view()},
            "queue settle");
    return settled_of(store::ReplyView(reply, "queue settle").integer());
  }

  std::vector<bool> renew(std::span<const Renewal> items, milliseconds lease) override {
    const store::NumberArg ms(lease.count());
    std::vector<std::string> tokens;
    tokens.reserve(items.size());
    std::vector<std::string_view> args{ms.view()};
    for (const Renewal& r : items) tokens.push_back(std::to_string(r.token));
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
    return {static_cast<std::uint64_t>(r[0].integer()), static_cast<std::uint64_t>(r[1].integer()),
            static_cast<std::uint64_t>(r[2].integer()), static_cast<std::uint64_t>(r[3].integer())};
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
      default: return Settled::gone;
    }
  }
  // take_first's reply (scripts/_queue.lua).
  static QueueTaken read_taken(const store::ReplyView& r) {
    QueueTaken out;
    out.now_ms = r[1].integer();
    if (r[0].integer() == 0) {
      out.next_ms = r[2].integer();
      return out;
    }
    QueueMessage& m = out.message.emplace();
    m.id = r[2].text();
    m.payload = r[3].text();
    m.token = static_cast<std::uint64_t>(r[4].integer());
    m.due_ms = r[5].integer();
    m.now_ms = out.now_ms;
    m.deliveries = static_cast<int>(r[6].integer());
    m.failures = static_cast<int>(r[7].integer());
    m.retries = static_cast<int>(r[8].integer());
    m.last_error = r[9].text();
    return out;
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
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for queues when Weave::queue_redis is linked:
// cmake/link/weave_link_queue_redis.cpp refers to weave_link_queue_redis.
extern "C" WEAVE_API const char weave_link_queue_redis = 0;
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
