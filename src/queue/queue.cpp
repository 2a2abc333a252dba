// weave::Queue and weave::QueueDelivery over the queue runtime: options,
// input checks, take()'s wait, deliveries as core leases.
#include <uuid/uuid.h>

#include <algorithm>
#include <random>

#include "core/events.h"
#include "core/option_check.h"
#include "core/recycled.h"
#include "core/renewer.h"
#include "queue/queue_runtime.h"
#include "weave/duration.h"

namespace WEAVE_NAMESPACE {

using std::chrono::milliseconds;

namespace {
constexpr int kMaxRetries = 1000;  // QueueOptions::retries and OfferOptions::retries
}  // namespace

namespace detail {
// ConfigError when `url` names a scheme no linked library serves (below).
void check_queue_scheme(const std::string& url);
}  // namespace detail

void QueueOptions::validate() const {
  const detail::OptionCheck check("QueueOptions");
  check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
  check.duration("lease", lease, milliseconds(30));
  check.count("retries", retries, 0, kMaxRetries);
  check.duration("backoff", backoff);
  check.duration("backoff_cap", backoff_cap);
  check.duration("max_delay", max_delay);
  if (max_payload_bytes == 0) check.fail("max_payload_bytes", "must be positive");
  detail::check_queue_scheme(url);  // an unknown scheme fails here, not at the first call
}

namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

StoreSchemes<QueueStoreFactory>& schemes() { return feature_schemes<QueueStoreFactory>("queue"); }

QueueOpener mem_opener(std::string_view table) {
  return [table = std::string(table)](std::string_view name) { return make_mem_queue(table, name); };
}

double jitter() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
}

// A delay of an offer, a reschedule or a retry (`what` names it): not
// negative, at most QueueOptions::max_delay; else QueueError naming the queue.
void check_delay(const QueueState& q, milliseconds delay, std::string_view what) {
  const std::string text = std::string(what) + " of " + std::to_string(delay.count()) + " ms";
  if (delay < milliseconds(0)) throw QueueError(q.name, text + " is negative");
  if (delay > q.options().max_delay)
    throw QueueError(q.name, text + " is over QueueOptions::max_delay (" +
                                 std::to_string(q.options().max_delay.count()) + " ms)");
}

// Where a delivery's lease can be lost, in the words of DeliveryLost.
constexpr const char* kTakenBack =
    "its lease ran out and the queue took it back (it may be running elsewhere now, or dead-lettered)";

}  // namespace

std::string new_id() {
  uuid_t u;
  uuid_generate_random(u);
  char text[37];
  uuid_unparse_lower(u, text);
  return text;
}

void register_queue_store(std::string scheme, QueueStoreFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

void check_queue_scheme(const std::string& url) { schemes().check(url); }

QueueRuntimeSlot& queue_runtime_slot() { return never_freed<QueueRuntimeSlot>(); }

void check_queue_text(std::string_view queue, std::string_view what, std::string_view text) {
  auto refuse = [&](const std::string& why) { throw QueueError(std::string(queue), std::string(what) + " " + why); };
  if (text.empty()) refuse("must not be empty");
  if (text.size() > 200) refuse("is " + std::to_string(text.size()) + " bytes long; at most 200");
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) refuse("contains the control byte " + std::to_string(c) + " at offset " + std::to_string(i));
    // UTF-8: the sequence's length from its lead byte, then continuation bytes.
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = n != 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (!ok) refuse("is not UTF-8 text (byte " + std::to_string(c) + " at offset " + std::to_string(i) + ")");
    i += n;
  }
}

// ---- HeldDelivery ----

HeldDelivery::HeldDelivery(std::shared_ptr<QueueState> q, QueueMessage m, milliseconds lease, Clock::time_point sent)
    : LeaseCore([&](Terms& terms) {  // renewed by its queue once QueueState::hold watches it
        terms.key = q->name + "/" + m.id;
        terms.owner = std::to_string(m.token);
        terms.lease_time = lease;
        terms.renew_every = renew_interval(lease);
        terms.acquired_at = sent;
        terms.group = q;
      }),
      HeldLease(static_cast<LeaseCore&>(*this)),
      queue(std::move(q)),
      message(std::move(m)) {
  start_deadline(sent, queue->store().in_process());
}

std::string HeldDelivery::ran_out_cause() const {
  return "its delivery lease ran out before it was renewed (the process was paused, or the store did not answer "
         "the renewals in time): the queue takes it back and delivers it again";
}

std::string HeldDelivery::gone_cause() const {
  return "a renewal found the delivery taken back (its lease had run out) or the message cancelled";
}

void HeldDelivery::count_lost() noexcept { queue->series.counts.add(&QueueCountStripe::leases_lost); }

void HeldDelivery::report_lost() noexcept {
  report_to(queue->options().on_event, "queue", *this,
            "another worker may be running it now; settling this delivery is refused");
}

// ---- QueueState ----

void QueueState::report_dead(std::string_view id, std::string_view reason) const noexcept {
  series.counts.add(&QueueCountStripe::dead_lettered);
  try {
    emit_notice(options_.on_event, EventKind::dead_lettered, "queue", name + "/" + std::string(id),
                "dead-lettered: " + std::string(reason));
  } catch (...) {
  }
}

void QueueState::report_reclaimed(const std::vector<std::string>& ids) const noexcept {
  if (ids.empty()) return;
  try {
    const std::string reason = std::string(kStalled) + ", on its last attempt";
    for (const std::string& id : ids) report_dead(id, reason);
  } catch (...) {
  }
}

QueueCounts QueueState::counts() {
  QueueCounts c = store_->counts(jitter());
  report_reclaimed(c.dead_lettered);
  return c;
}

QueueState::QueueState(std::string n, std::shared_ptr<QueueStore> store, const QueueOptions& options)
    : name(std::move(n)), series(queue_series(name)), options_(options), store_(std::move(store)) {}

std::unique_ptr<QueueWaiter> QueueState::waiter_if_subscribed() {
  {
    Guard g(mutex_);
    if (!anchor_) return nullptr;
  }
  return store_->prepare_wait();
}

std::unique_ptr<QueueWaiter> QueueState::prepare_wait() {
  {
    Guard g(mutex_);
    if (!anchor_) anchor_ = store_->prepare_wait();
  }
  return store_->prepare_wait();
}

std::shared_ptr<HeldDelivery> QueueState::hold(QueueMessage message, Clock::time_point sent) {
  auto held = std::allocate_shared<HeldDelivery>(Recycled<HeldDelivery>{}, shared_from_this(), std::move(message),
                                                 options_.lease, sent);
  Renewer::instance().watch(*held, held, /*fresh=*/true);
  return held;
}

void QueueState::renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const {
  std::vector<QueueStore::Held> items;
  items.reserve(leases.size());
  for (LeaseCore* l : leases) {
    const auto& d = static_cast<const HeldDelivery&>(*l);
    items.push_back({d.message.id, d.message.token});
  }
  owned = store_->renew(items, options_.lease);
}

QueueState::IdleTurn::~IdleTurn() {
  if (leading_) got_message();  // gone: a follower leads next
}

QueueState::IdleTurn::Next QueueState::IdleTurn::lead(Clock::time_point deadline) {
  if (leading_) return Next::lead;
  Guard g(q_.mutex_);
  if (!q_.led_) {
    q_.led_ = leading_ = true;
    return Next::lead;
  }
  const std::uint64_t seen = q_.handed_on_;
  ++q_.followers_;
  const bool woken = q_.mutex_.wait_until(q_.idle_cv_, deadline, [&]() WEAVE_REQUIRES(q_.mutex_) {
    return q_.handed_on_ != seen || !q_.led_;
  });
  --q_.followers_;
  return woken ? Next::look : Next::timed_out;
}

void QueueState::interrupt() {
  {
    Guard g(mutex_);
    ++handed_on_;
    idle_cv_.notify_all();
  }
  try {
    store_->wake();
  } catch (const std::exception&) {
    // The store is unreachable: the leader sees its deadline (or the stop) when it next looks.
  }
}

void QueueState::IdleTurn::got_message() noexcept {
  Guard g(q_.mutex_);
  if (leading_) q_.led_ = leading_ = false;
  if (q_.followers_ > 0) {
    ++q_.handed_on_;
    q_.idle_cv_.notify_one();
  }
}

// ---- QueueRuntime ----

QueueRuntime::QueueRuntime(QueueOptions options) : options_(std::move(options)) {
  options_.validate();
  open_ = schemes().open(options_, mem_opener);
}

std::shared_ptr<QueueState> QueueRuntime::state(const std::string& name) {
  Guard g(mutex_);
  auto it = queues_.find(name);
  if (it == queues_.end()) it = queues_.emplace(name, std::make_shared<QueueState>(name, open_(name), options_)).first;
  return it->second;
}

std::vector<std::string> QueueRuntime::ticking_queues() { return open_("")->ticking_queues(); }

}  // namespace detail

void configure_queues(QueueOptions options) {
  options.validate();
  detail::queue_runtime_slot().configure(std::move(options));
}

namespace detail {
QueueDelivery QueueAccess::delivery(std::shared_ptr<HeldDelivery> held) { return QueueDelivery(std::move(held)); }
HeldDelivery* QueueAccess::held(const QueueDelivery& d) { return d.held_.get(); }
const std::shared_ptr<HeldDelivery>& QueueAccess::shared(const QueueDelivery& d) { return d.held_; }
std::shared_ptr<QueueState> QueueAccess::state(Queue& q) { return q.state(); }
}  // namespace detail

// ---- Queue ----

Queue::Queue(std::string name) {
  detail::check_queue_text(name, "name", name);
  state_ = detail::queue_runtime_slot().get()->state(name);
}

std::shared_ptr<detail::QueueState> Queue::state() {
  std::shared_ptr<detail::QueueState> s = state_.load();
  if (s->pid != detail::current_pid()) {  // a fork()ed child: its own runtime, connections and threads
    s = detail::queue_runtime_slot().get()->state(s->name);
    state_.store(s);
  }
  return s;
}

const std::string& Queue::name() const noexcept { return state_.load()->name; }

namespace {

// A message's id and settings, checked: what offer_json() and
// offer_many_json() send. Throws QueueError naming the queue and the cause
// (after `context`, which says which message of several).
struct CheckedOffer {
  std::string id;
  int retries;
  milliseconds backoff, backoff_cap;
  // The store's offer of `json` under this id and retry policy (a view of both).
  detail::QueueOffer offer(std::string_view json, milliseconds delay) const {
    detail::QueueOffer o;
    o.id = id;
    o.payload = json;
    o.delay = delay;
    o.retries = retries;
    o.backoff = backoff;
    o.backoff_cap = backoff_cap;
    return o;
  }
};

CheckedOffer check_offer(const detail::QueueState& st, std::string_view json, milliseconds delay, const OfferOptions& o,
                         const std::string& context = {}) {
  const QueueOptions& opt = st.options();
  const std::string& q = st.name;
  detail::check_delay(st, delay, context + "a delay");
  if (json.size() > opt.max_payload_bytes)
    throw QueueError(q, context + "a payload of " + std::to_string(json.size()) +
                            " bytes is over QueueOptions::max_payload_bytes (" + std::to_string(opt.max_payload_bytes) +
                            ")");
  const int retries = o.retries.value_or(opt.retries);
  if (retries < 0 || retries > kMaxRetries)
    throw QueueError(q, context + "retries must be 0.." + std::to_string(kMaxRetries) + ", got " +
                            std::to_string(retries));
  const milliseconds backoff = o.backoff.value_or(opt.backoff), cap = o.backoff_cap.value_or(opt.backoff_cap);
  if (backoff < milliseconds(0) || cap < milliseconds(0) || backoff > max_duration || cap > max_duration)
    throw QueueError(q, context + "backoff and backoff_cap must be 0.." + std::to_string(max_duration.count()) + " ms");
  std::string id = o.id;
  if (id.empty())
    id = detail::new_id();
  else
    detail::check_queue_text(q, context + "message id", id);
  return {std::move(id), retries, backoff, cap};
}

}  // namespace

std::string Queue::offer_json(std::string_view json, milliseconds delay, const OfferOptions& o) {
  const std::shared_ptr<detail::QueueState> st = state();
  CheckedOffer c = check_offer(*st, json, delay, o);
  const bool added = st->store().offer(c.offer(json, delay)).added;
  st->series.counts.add(added ? &detail::QueueCountStripe::offered : &detail::QueueCountStripe::offered_existing);
  return std::move(c.id);
}

std::future<std::string> Queue::offer_json_async(std::string_view json, milliseconds delay, const OfferOptions& o) {
  const std::shared_ptr<detail::QueueState> st = state();
  CheckedOffer c = check_offer(*st, json, delay, o);
  auto promise = std::make_shared<std::promise<std::string>>();  // (std::function copies what it holds)
  std::future<std::string> stored = promise->get_future();
  // The series, never freed, not the state: the last reference to a state
  // must not be dropped on the store's sender thread, which it owns.
  st->store().offer_async(c.offer(json, delay),
                          [promise, series = &st->series, id = c.id](detail::QueueOffered r, std::exception_ptr e) {
                            if (e) return promise->set_exception(e);
                            series->counts.add(r.added ? &detail::QueueCountStripe::offered
                                                       : &detail::QueueCountStripe::offered_existing);
                            promise->set_value(id);
                          });
  return stored;
}

std::vector<std::string> Queue::offer_many_json(std::span<const JsonOffer> messages) {
  const std::shared_ptr<detail::QueueState> st = state();
  std::vector<CheckedOffer> checked;  // all of them before any is sent
  checked.reserve(messages.size());
  for (const JsonOffer& m : messages)
    checked.push_back(check_offer(*st, m.json, m.delay, m.options,
                                  "offer_many's message " + std::to_string(checked.size()) +
                                      " (none of them was offered): "));
  std::vector<detail::QueueOffer> offers;
  offers.reserve(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const CheckedOffer& c = checked[i];
    offers.push_back(c.offer(messages[i].json, messages[i].delay));
  }
  if (!offers.empty()) {
    std::uint64_t added = 0;
    for (const detail::QueueOffered& r : st->store().offer_many(offers)) added += r.added ? 1 : 0;
    st->series.counts.add(&detail::QueueCountStripe::offered, added);
    st->series.counts.add(&detail::QueueCountStripe::offered_existing, offers.size() - added);
  }
  std::vector<std::string> ids;
  ids.reserve(checked.size());
  for (CheckedOffer& c : checked) ids.push_back(std::move(c.id));
  return ids;
}

namespace {

// Where a settle left its delivery: the store's answer recorded on the lease
// (a refusal marks it lost and reports it once) and counted. Returns the answer.
detail::Settled finish_settle(detail::HeldDelivery& d, detail::SettleAction action, detail::Settled r,
                              const std::string& error = {}) {
  using C = detail::QueueCountStripe;
  d.settled = true;
  if (r == detail::Settled::absent) {
    // No message at all. Within the lease nobody else could settle it and a
    // cancel leaves a marker: an ack finding it so is its own first send,
    // which ran (its answer was lost). Otherwise the lease had run out and
    // the message was settled elsewhere, or the queue was purged.
    const bool own_ack = action == detail::SettleAction::ack && !d.is_lost() &&
                         detail::LeaseCore::Clock::now() < d.expires_at();
    r = own_ack ? detail::Settled::done : detail::Settled::taken_back;
  }
  if (r == detail::Settled::done || r == detail::Settled::dead) {
    static constexpr std::atomic<std::uint64_t> C::*by_action[] = {&C::acked, &C::retried, &C::failed, nullptr};
    if (auto field = by_action[static_cast<int>(action)]) d.queue->series.counts.add(field);
    d.queue->series.processing.observe(std::chrono::steady_clock::now() - d.terms().acquired_at);
  }
  if (r == detail::Settled::taken_back || r == detail::Settled::gone || r == detail::Settled::failed) {
    d.record_lost(r == detail::Settled::gone     ? std::string("it was cancelled")
                  : r == detail::Settled::failed ? "the store answered its ack with an error (" + error +
                                                       "); the queue takes it back once its lease runs out"
                                                 : std::string(detail::kTakenBack));
    d.report_lost_once();
  }
  d.drop_hold();
  return r;
}

void refuse_if_settled(const detail::HeldDelivery& d) {
  if (d.settled) throw UsageError("queue '" + d.queue->name + "': message '" + d.message.id + "' was settled already");
}

void begin_settle(detail::HeldDelivery& d) {
  refuse_if_settled(d);
  d.settle();  // renewals stop: the store's answer to this settle decides
}

constexpr std::size_t kMaxTake = 1000;  // take_many's max

// take_many_json(), after acking `done` in the same first round trip.
std::vector<QueueDelivery> take_from(detail::QueueState& q, std::span<detail::HeldDelivery* const> done,
                                     std::size_t max, milliseconds timeout, std::stop_token stop) {
  using Clock = std::chrono::steady_clock;
  if (timeout < milliseconds(0)) throw QueueError(q.name, "take()'s timeout is negative");
  if (max < 1 || max > kMaxTake)
    throw QueueError(q.name, "take_many()'s max must be 1.." + std::to_string(kMaxTake) + ", got " + std::to_string(max));
  for (const detail::HeldDelivery* d : done) refuse_if_settled(*d);  // before anything is acked
  const auto deadline = Clock::now() + timeout;
  // Made before the first take when this process already subscribed to the
  // queue's wake-ups (no round trip then), else after a first take found
  // nothing (a busy queue never subscribes).
  std::unique_ptr<detail::QueueWaiter> waiter = q.waiter_if_subscribed();
  detail::QueueState::IdleTurn turn(q);
  const std::stop_callback on_stop(stop, [&q] { q.interrupt(); });
  for (;;) {
    const auto sent = Clock::now();
    detail::QueueTaken t;
    if (!done.empty()) {
      std::vector<detail::QueueStore::Held> held;
      held.reserve(done.size());
      for (detail::HeldDelivery* d : done) {
        begin_settle(*d);
        held.push_back({d->message.id, d->message.token});
      }
      // Once stopped, the acks alone: what a take brought now would only be dropped.
      auto both = q.store().ack_and_take(held, q.options().lease, detail::jitter(), stop.stop_requested() ? 0 : max);
      for (std::size_t i = 0; i < done.size(); ++i)
        finish_settle(*done[i], detail::SettleAction::ack, both.acked[i], both.errors[i]);
      done = {};
      t = std::move(both.taken);
    } else {
      if (stop.stop_requested()) return {};
      t = q.store().take(q.options().lease, detail::jitter(), max);
    }
    q.report_reclaimed(t.dead_lettered);
    if (!t.messages.empty()) {
      turn.got_message();
      detail::QueueSeries& series = q.series;
      std::vector<QueueDelivery> out;
      out.reserve(t.messages.size());
      for (detail::QueueMessage& m : t.messages) {
        series.counts.add(&detail::QueueCountStripe::delivered);
        if (m.deliveries > 1) series.counts.add(&detail::QueueCountStripe::redelivered);
        series.lateness.observe(milliseconds(std::max<std::int64_t>(0, m.now_ms - m.due_ms)));
        out.push_back(detail::QueueAccess::delivery(q.hold(std::move(m), sent)));
      }
      return out;
    }
    const auto received = Clock::now();
    if (received >= deadline || stop.stop_requested()) return {};
    if (!waiter) {
      waiter = q.prepare_wait();  // then look once more: an offer may have come in between
      continue;
    }
    const auto next = turn.lead(deadline);
    if (next == detail::QueueState::IdleTurn::Next::timed_out) return {};
    if (next == detail::QueueState::IdleTurn::Next::look) continue;  // handed on to
    // Leading: wait for a wake-up (a new first message) or the first due
    // time (a message, or a delivery lease to take back), by the store's clock.
    auto wake = deadline;
    bool at_due = false;
    if (t.next_ms >= 0) {
      const auto due = received + milliseconds(std::max<std::int64_t>(0, t.next_ms - t.now_ms));
      if (due < wake) {
        wake = due;
        at_due = true;
      }
    }
    if (!waiter->wait_until(wake) && !at_due) return {};  // the caller's deadline, and nothing came
  }
}

std::optional<QueueDelivery> first(std::vector<QueueDelivery> taken) {
  if (taken.empty()) return std::nullopt;
  return std::move(taken.front());
}

}  // namespace

std::optional<QueueDelivery> Queue::take_json(milliseconds timeout, std::stop_token stop) {
  return first(take_many_json(1, timeout, stop));
}

std::vector<QueueDelivery> Queue::take_many_json(std::size_t max, milliseconds timeout, std::stop_token stop) {
  const std::shared_ptr<detail::QueueState> st = state();
  if (stop.stop_requested()) return {};
  return take_from(*st, {}, max, timeout, stop);
}

std::vector<QueueDelivery> Queue::ack_and_take_many(std::span<QueueDelivery> done, std::size_t max,
                                                    milliseconds timeout, std::stop_token stop) {
  std::vector<QueueDelivery*> pointers;
  pointers.reserve(done.size());
  for (QueueDelivery& d : done) pointers.push_back(&d);
  return ack_and_take_pointers(pointers, max, timeout, stop);
}

std::vector<QueueDelivery> Queue::ack_and_take_pointers(std::span<QueueDelivery* const> done, std::size_t max,
                                                        milliseconds timeout, std::stop_token stop) {
  const std::shared_ptr<detail::QueueState> st = state();
  std::vector<detail::HeldDelivery*> held;
  held.reserve(done.size());
  for (QueueDelivery* d : done) {
    detail::HeldDelivery* h = detail::QueueAccess::held(*d);
    if (!h || h->settled) continue;  // moved from, or settled by fail(), retry(), dead()
    if (h->queue != st)
      throw UsageError("queue '" + st->name + "': ack_and_take_many() was given a delivery of queue '" +
                       h->queue->name + "'");
    held.push_back(h);
  }
  return take_from(*st, held, max, timeout, stop);
}

bool Queue::cancel(std::string_view id) {
  const std::shared_ptr<detail::QueueState> st = state();
  detail::check_queue_text(st->name, "message id", id);
  return st->store().edit(id, detail::EditAction::cancel, milliseconds(0)) == detail::Edited::done;
}

bool Queue::reschedule(std::string_view id, milliseconds delay) {
  const std::shared_ptr<detail::QueueState> st = state();
  detail::check_queue_text(st->name, "message id", id);
  detail::check_delay(*st, delay, "a delay");
  return st->store().edit(id, detail::EditAction::reschedule, delay) == detail::Edited::done;
}

bool Queue::requeue(std::string_view id) {
  const std::shared_ptr<detail::QueueState> st = state();
  detail::check_queue_text(st->name, "message id", id);
  return st->store().edit(id, detail::EditAction::requeue, milliseconds(0)) == detail::Edited::done;
}

std::uint64_t Queue::purge_dead() { return state()->store().purge_dead(); }

QueueStats Queue::stats() {
  const detail::QueueCounts c = state()->counts();
  return {c.delayed, c.ready, c.in_flight, c.dead};
}

MessageInfo Queue::inspect(std::string_view id) {
  const std::shared_ptr<detail::QueueState> st = state();
  detail::check_queue_text(st->name, "message id", id);
  const detail::QueueMessageState s = st->store().inspect(id);
  MessageInfo info;
  info.state = s.state == 'z'   ? MessageState::scheduled
               : s.state == 'a' ? MessageState::in_flight
               : s.state == 'd' ? MessageState::dead
                                : MessageState::absent;
  info.due = std::chrono::system_clock::time_point(milliseconds(s.due_ms));
  info.deliveries = s.deliveries;
  info.failures = s.failures;
  info.last_error = s.last_error;
  return info;
}

namespace {
std::vector<ListedMessage> listed(const std::vector<detail::QueueListed>& found, MessageState state) {
  std::vector<ListedMessage> out;
  out.reserve(found.size());
  for (const detail::QueueListed& m : found) {
    MessageInfo info;
    info.state = state;
    info.due = std::chrono::system_clock::time_point(milliseconds(m.due_ms));
    info.deliveries = m.deliveries;
    info.failures = m.failures;
    info.last_error = m.last_error;
    out.push_back({m.id, m.payload, std::move(info)});
  }
  return out;
}
}  // namespace

std::vector<ListedMessage> Queue::peek(std::size_t limit) {
  return listed(state()->store().list('z', limit), MessageState::scheduled);
}

std::vector<ListedMessage> Queue::dead_letters(std::size_t limit) {
  return listed(state()->store().list('d', limit), MessageState::dead);
}

// ---- QueueDelivery ----

QueueDelivery::QueueDelivery(std::shared_ptr<detail::HeldDelivery> held) noexcept : held_(std::move(held)) {}
QueueDelivery::QueueDelivery(QueueDelivery&&) noexcept = default;

QueueDelivery& QueueDelivery::operator=(QueueDelivery&& other) noexcept {
  if (this != &other) {
    QueueDelivery old(std::move(*this));  // settled by its destructor, as if this one were destroyed
    held_ = std::move(other.held_);
  }
  return *this;
}

QueueDelivery::~QueueDelivery() {
  if (!held_ || held_->settled) return;
  try {
    fail("the delivery was dropped without ack, retry, fail or dead (an exception left its handler?)");
  } catch (...) {
    // Taken back already, or the store is unreachable: the lease runs out and the queue takes it back.
  }
}

const std::string& QueueDelivery::queue() const noexcept { return held_->queue->name; }
const std::string& QueueDelivery::id() const noexcept { return held_->message.id; }
std::string_view QueueDelivery::payload() const noexcept { return held_->message.payload; }
std::uint64_t QueueDelivery::fencing_token() const noexcept { return held_->message.token; }
int QueueDelivery::attempt() const noexcept { return held_->message.deliveries; }
int QueueDelivery::failures() const noexcept { return held_->message.failures; }
const std::string& QueueDelivery::last_error() const noexcept { return held_->message.last_error; }
milliseconds QueueDelivery::lateness() const noexcept {
  return milliseconds(held_->message.now_ms - held_->message.due_ms);
}
const HeldLease& QueueDelivery::lease() const noexcept { return *held_; }
bool QueueDelivery::settled() const noexcept { return held_ && held_->settled; }

namespace {

detail::Settled settle(detail::HeldDelivery& d, detail::SettleAction action, milliseconds delay,
                       std::string_view reason) {
  begin_settle(d);
  if (reason.size() > 4096) reason = reason.substr(0, 4096);  // an error text, not a payload
  const detail::Settled r = finish_settle(
      d, action, d.queue->store().settle(d.message.id, d.message.token, action, delay, reason, detail::jitter()));
  if (r == detail::Settled::taken_back || r == detail::Settled::gone)
    throw DeliveryLost(d.queue->name, d.message.id, d.cause());
  if (r == detail::Settled::dead) d.queue->report_dead(d.message.id, reason);
  return r;
}

}  // namespace

void QueueDelivery::ack() { settle(*held_, detail::SettleAction::ack, milliseconds(0), {}); }

void QueueDelivery::retry(milliseconds delay) {
  detail::check_delay(*held_->queue, delay, "a retry delay");
  settle(*held_, detail::SettleAction::retry, delay, {});
}

bool QueueDelivery::fail(std::string_view reason) {
  return settle(*held_, detail::SettleAction::fail, milliseconds(0), reason) == detail::Settled::dead;
}

void QueueDelivery::dead(std::string_view reason) { settle(*held_, detail::SettleAction::dead, milliseconds(0), reason); }

std::optional<QueueDelivery> QueueDelivery::ack_and_take(milliseconds timeout, std::stop_token stop) {
  detail::HeldDelivery* done = held_.get();
  return first(take_from(*held_->queue, {&done, 1}, 1, timeout, stop));
}

}  // namespace weave
