// weave/queue.h — delay queues: messages delivered at their due time by the
// store's clock, at least once, to any process (docs/queue.md).
//
//   struct OrderTimeout { std::string order; };
//   NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OrderTimeout, order)    // storable as JSON
//
//   weave::DelayQueue<OrderTimeout> q("order-timeout");
//   std::string id = q.offer(OrderTimeout{"o-1"}, 30min);      // returns the message id
//   q.offer(OrderTimeout{"o-2"}, 30min, {.id = "o-2"});         // an id queued twice is one message
//   if (auto d = q.take(5s)) {                                  // waits up to 5 s, woken, never polling
//     handle(d->value());
//     d->ack();                                                 // or d->retry(10s), d->fail("why")
//   }
//   q.cancel(id);  q.reschedule(id, 5min);  q.stats();         // exact counts per state
//   q.offer_many(std::vector<weave::Offer<OrderTimeout>>{{{"o-3"}, 1min}, {{"o-4"}, 2min}});  // few round trips
//
//   auto batch = q.take_many(16, 5s);                           // a batch worker: up to 16 per round trip
//   while (!batch.empty()) {
//     for (auto& d : batch) handle(d.value());                  // (or d.fail("why") for one)
//     batch = q.ack_and_take_many(batch, 16, 5s);               // acks the rest, takes the next batch
//   }
//
// The store is QueueOptions::url: mem:// (this process only: not durable)
// unless code, $WEAVE_QUEUE_URL, $WEAVE_URL or the config file name another.
//
// A delivery is a lease on its message (a weave::HeldLease, renewed while
// held): a worker that dies, stops or hangs past the lease loses the message
// to the next take() anywhere, and that counts as a failed attempt. Failed
// attempts are retried after a backoff doubling from `backoff` (jittered,
// capped at `backoff_cap`); after `retries` of them the message is dead:
// kept with its last error until requeue()d or purge_dead()ed.
#pragma once

#include "weave/abi.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "weave/error.h"
#include "weave/event.h"
#include "weave/held_lease.h"
#include "weave/json_codec.h"

namespace WEAVE_NAMESPACE {

namespace detail {
class HeldDelivery;
class QueueState;
struct QueueAccess;  // src/queue/queue_runtime.h: for Weave's own code
}  // namespace detail

struct WEAVE_API QueueOptions {
  // Its section in the configuration file and its environment variables
  // prefix (WEAVE_QUEUE_<FIELD>): weave/config.h.
  static constexpr std::string_view config_section = "queue";
  // The store (weave::load_options() puts WEAVE_QUEUE_URL, WEAVE_URL or the
  // file's url here: the one place that decides; this struct is taken as given).
  std::string url = "mem://";
  // A delivery's lease, renewed every third of it while held: how long a
  // dead or stopped worker keeps a message from the others.
  std::chrono::milliseconds lease{30'000};
  // Defaults of an offer (OfferOptions overrides them per message); the
  // values are [[delay]]'s defaults (annotations/delay.json; a test keeps
  // them equal).
  int retries = 3;
  std::chrono::milliseconds backoff{1'000};
  std::chrono::milliseconds backoff_cap{600'000};
  // Larger payloads are refused with a QueueError at offer().
  std::size_t max_payload_bytes = 1 << 20;
  // The longest delay accepted.
  std::chrono::milliseconds max_delay{std::chrono::hours(24 * 365 * 10)};
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
  // Every key of queue N is "{<prefix>N}...": one hash tag per queue.
  std::string key_prefix = "weave:queue:";
  // Told of leases lost while held (EventKind::lease_lost), failed renewals
  // and dead-lettered messages (dead_lettered); quick, must not throw.
  // Empty: the process's handler (weave::set_event_handler).
  EventHook on_event = {};

  // Throws weave::ConfigError naming the field for a value out of range.
  void validate() const;
};

// Replaces the process-wide configuration. Throws ConfigError.
WEAVE_API void configure_queues(QueueOptions options);

struct OfferOptions {
  // "" = a new unique id. An id already queued (in any state) is not queued
  // again: offer() returns it and leaves the message as it was. Once
  // acknowledged or cancelled, an id may be offered again.
  std::string id = "";
  std::optional<int> retries = std::nullopt;  // QueueOptions' when unset
  std::optional<std::chrono::milliseconds> backoff = std::nullopt;
  std::optional<std::chrono::milliseconds> backoff_cap = std::nullopt;
};

// Exact counts, taken in one atomic step on the store.
struct QueueStats {
  std::uint64_t delayed = 0;    // due later
  std::uint64_t ready = 0;      // due, waiting for a take()
  std::uint64_t in_flight = 0;  // delivered, not settled, lease running
  std::uint64_t dead = 0;       // retries spent, or dead-lettered
};

enum class MessageState { absent, scheduled, in_flight, dead };

struct MessageInfo {
  MessageState state = MessageState::absent;
  // Due time (scheduled), by the store's clock.
  std::chrono::system_clock::time_point due;
  int deliveries = 0, failures = 0;
  std::string last_error;  // of the last failed attempt or dead-lettering
};

// A message as Queue::peek() and Queue::dead_letters() list it.
struct ListedMessage {
  std::string id, payload;  // payload: the JSON offered
  MessageInfo info;
};

// One message taken from a queue, held under a lease until settled by
// exactly one of ack(), retry(), fail(), dead(). Settling after the lease
// was lost and the message taken back (given to another worker, or
// dead-lettered), or after it was cancelled, throws weave::DeliveryLost.
// Dropped unsettled (e.g. an exception left the handler), it counts as a
// failed attempt. Movable, not copyable; not for concurrent use.
class WEAVE_API QueueDelivery {
 public:
  QueueDelivery(QueueDelivery&&) noexcept;
  QueueDelivery& operator=(QueueDelivery&&) noexcept;
  ~QueueDelivery();

  const std::string& queue() const noexcept;
  const std::string& id() const noexcept;
  std::string_view payload() const noexcept;  // JSON text as offered
  // Grows with every delivery of the queue: a store that remembers the
  // largest token it saw can refuse a late write from a worker that lost
  // the message.
  std::uint64_t fencing_token() const noexcept;
  int attempt() const noexcept;   // 1 for the first delivery
  int failures() const noexcept;  // failed attempts before this one
  const std::string& last_error() const noexcept;
  // How late it was taken: the store's now minus its due time (never
  // negative: nothing is delivered before it is due).
  std::chrono::milliseconds lateness() const noexcept;
  // The lease: stop_token() fires when it is lost.
  const HeldLease& lease() const noexcept;
  bool settled() const noexcept;

  // Done: removed from the queue.
  void ack();
  // Delivered again after `delay`; not a failed attempt.
  void retry(std::chrono::milliseconds delay);
  // A failed attempt with `reason`: retried after its backoff, or dead once
  // its retries are spent. Returns true when it went dead.
  bool fail(std::string_view reason);
  // Dead now, with `reason`, whatever its retries.
  void dead(std::string_view reason);
  // ack(), then the next message of the queue as take_json(timeout, stop)
  // gives it, the ack and the first take in one round trip: a worker's
  // usual step. A refused ack does not throw here (the next message would
  // be lost with it): lease().lost() and lease().lost_cause() tell. Once
  // `stop` is requested: the ack alone, nothing taken.
  std::optional<QueueDelivery> ack_and_take(std::chrono::milliseconds timeout, std::stop_token stop = {});

 private:
  friend struct detail::QueueAccess;
  explicit QueueDelivery(std::shared_ptr<detail::HeldDelivery> held) noexcept;
  std::shared_ptr<detail::HeldDelivery> held_;
};

// One message of Queue::offer_many_json(): what offer_json() takes.
struct JsonOffer {
  std::string_view json;
  std::chrono::milliseconds delay{0};
  OfferOptions options{};
};

// One message of DelayQueue<T>::offer_many().
template <class T>
struct Offer {
  T value;
  std::chrono::milliseconds delay{0};
  OfferOptions options{};
};

// A queue of JSON text; DelayQueue<T> is the typed one. A cheap handle:
// handles of one name in a process share their state. Thread-safe.
class WEAVE_API Queue {
 public:
  // Throws QueueError for an empty name, one over 200 bytes, or one with
  // control or non-UTF-8 bytes; ConfigError when the store URL is bad.
  explicit Queue(std::string name);
  Queue(const Queue& other) : state_(other.state_.load()) {}
  Queue& operator=(const Queue& other) {
    state_.store(other.state_.load());
    return *this;
  }

  const std::string& name() const noexcept;
  // Returns the message id. Throws QueueError (bad id, delay, payload size).
  std::string offer_json(std::string_view json, std::chrono::milliseconds delay, const OfferOptions& options = {});
  // offer_json() without waiting: checked now (bad input throws QueueError
  // here, nothing sent), then stored in the background; the future holds the
  // id once the store has the message, or the store's error. Offers made this
  // way reach the store in the order they were made; on Redis, those waiting
  // go together (up to 128 per script, 8 scripts per round trip).
  std::future<std::string> offer_json_async(std::string_view json, std::chrono::milliseconds delay,
                                            const OfferOptions& options = {});
  // Many messages in few round trips (on Redis up to 128 per script and 8
  // scripts per round trip); returns their ids, in order. Every message is
  // checked before any is sent: a bad one throws QueueError naming it, and
  // none is offered. A store error part-way may leave some queued; offered
  // again with the same ids they are still one message each.
  std::vector<std::string> offer_many_json(std::span<const JsonOffer> messages);
  // The first due message, waiting for one up to `timeout` (woken by the
  // store at the due time or by a new earlier message; never polling), or
  // until `stop` is requested. Consumers of one queue in a process take
  // turns waiting on the store: one wake-up costs the process one request.
  std::optional<QueueDelivery> take_json(std::chrono::milliseconds timeout, std::stop_token stop = {});
  // Up to `max` (1..1000) due messages in one round trip, each its own
  // delivery and lease; waits for the first like take_json(). Empty: none
  // by the timeout or the stop. A batch trades latency for throughput: what
  // it took waits for the ones before it, held by this worker.
  std::vector<QueueDelivery> take_many_json(std::size_t max, std::chrono::milliseconds timeout,
                                            std::stop_token stop = {});
  // Acks every delivery of `done` not settled yet (those that failed were
  // settled with fail() and the like), then take_many_json(max, ...); the
  // acks and the first take in one round trip: a batch worker's usual step.
  // A refused ack does not throw (the batch taken would be lost with it):
  // that delivery's lease().lost() tells. Once `stop` is requested: the
  // acks alone, nothing taken.
  std::vector<QueueDelivery> ack_and_take_many(std::span<QueueDelivery> done, std::size_t max,
                                               std::chrono::milliseconds timeout, std::stop_token stop = {});
  // Removes the message whatever its state; false when there was none.
  bool cancel(std::string_view id);
  // A scheduled message now due in `delay`; false when absent, in flight or dead.
  bool reschedule(std::string_view id, std::chrono::milliseconds delay);
  // A dead message due now, its failures forgotten; false when not dead.
  bool requeue(std::string_view id);
  std::uint64_t purge_dead();
  QueueStats stats();
  MessageInfo inspect(std::string_view id);
  // For operators (`weave queue peek|dead`), read-only: the first `limit`
  // scheduled messages by due time (due ones first), and the last `limit`
  // dead-lettered ones, newest first, each with its last error.
  std::vector<ListedMessage> peek(std::size_t limit = 20);
  std::vector<ListedMessage> dead_letters(std::size_t limit = 20);

 private:
  template <class T>
  friend class DelayQueue;
  friend struct detail::QueueAccess;
  std::vector<QueueDelivery> ack_and_take_pointers(std::span<QueueDelivery* const> done, std::size_t max,
                                                   std::chrono::milliseconds timeout, std::stop_token stop);
  // The state of this name in this process: made anew in a fork()ed child
  // (the parent's connections and threads are not the child's).
  std::shared_ptr<detail::QueueState> state();
  std::atomic<std::shared_ptr<detail::QueueState>> state_;
};

template <class T>
class Delivery : public QueueDelivery {
 public:
  Delivery(QueueDelivery&& d, T value) : QueueDelivery(std::move(d)), value_(std::move(value)) {}
  const T& value() const noexcept { return value_; }
  T& value() noexcept { return value_; }

 private:
  T value_;
};

// A queue of T, stored as JSON through nlohmann/json (to_json / from_json
// found by ADL). A message that no longer decodes as T (another version
// wrote it) is dead-lettered with the reason, never handed out.
template <class T>
class DelayQueue {
 public:
  explicit DelayQueue(std::string name) : queue_(std::move(name)) {}

  std::string offer(const T& value, std::chrono::milliseconds delay, const OfferOptions& options = {}) {
    return queue_.offer_json(encode(value), delay, options);
  }

  // offer() without waiting (Queue::offer_json_async).
  std::future<std::string> offer_async(const T& value, std::chrono::milliseconds delay,
                                       const OfferOptions& options = {}) {
    return queue_.offer_json_async(encode(value), delay, options);
  }

  // offer() of each message in few round trips (Queue::offer_many_json).
  std::vector<std::string> offer_many(std::span<const Offer<T>> messages) {
    std::vector<std::string> jsons;
    jsons.reserve(messages.size());
    for (const Offer<T>& m : messages) jsons.push_back(encode(m.value));
    std::vector<JsonOffer> offers;
    offers.reserve(messages.size());
    for (std::size_t i = 0; i < messages.size(); ++i) offers.push_back({jsons[i], messages[i].delay, messages[i].options});
    return queue_.offer_many_json(offers);
  }

  std::optional<Delivery<T>> take(std::chrono::milliseconds timeout, std::stop_token stop = {}) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    return first(decoded_many(queue_.take_many_json(1, timeout, stop), 1, deadline, stop));
  }

  // done.ack() and the next take() in one round trip (QueueDelivery::ack_and_take:
  // a refused ack does not throw; done.lease().lost() tells).
  std::optional<Delivery<T>> ack_and_take(Delivery<T>& done, std::chrono::milliseconds timeout,
                                          std::stop_token stop = {}) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<QueueDelivery> next;
    if (std::optional<QueueDelivery> d = done.ack_and_take(timeout, stop)) next.push_back(std::move(*d));
    return first(decoded_many(std::move(next), 1, deadline, stop));
  }

  // Queue::take_many_json, decoded.
  std::vector<Delivery<T>> take_many(std::size_t max, std::chrono::milliseconds timeout, std::stop_token stop = {}) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    return decoded_many(queue_.take_many_json(max, timeout, stop), max, deadline, stop);
  }

  // Queue::ack_and_take_many: acks every delivery of `done` not settled yet,
  // and takes the next batch, in one round trip.
  std::vector<Delivery<T>> ack_and_take_many(std::span<Delivery<T>> done, std::size_t max,
                                             std::chrono::milliseconds timeout, std::stop_token stop = {}) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<QueueDelivery*> pointers;
    pointers.reserve(done.size());
    for (Delivery<T>& d : done) pointers.push_back(&d);
    return decoded_many(queue_.ack_and_take_pointers(pointers, max, timeout, stop), max, deadline, stop);
  }

  const std::string& name() const noexcept { return queue_.name(); }
  bool cancel(std::string_view id) { return queue_.cancel(id); }
  bool reschedule(std::string_view id, std::chrono::milliseconds delay) { return queue_.reschedule(id, delay); }
  bool requeue(std::string_view id) { return queue_.requeue(id); }
  std::uint64_t purge_dead() { return queue_.purge_dead(); }
  QueueStats stats() { return queue_.stats(); }
  MessageInfo inspect(std::string_view id) { return queue_.inspect(id); }
  // The untyped queue under it.
  Queue& untyped() noexcept { return queue_; }

 private:
  std::string encode(const T& value) const {
    try {
      return nlohmann::json(value).dump();
    } catch (const nlohmann::json::exception& e) {
      throw QueueError(queue_.name(), "its payload does not encode as JSON: " + std::string(e.what()));
    }
  }

  // Each decoded as T: what does not decode is dead-lettered; when that
  // leaves none, the next batch is taken (until `deadline`).
  std::vector<Delivery<T>> decoded_many(std::vector<QueueDelivery> taken, std::size_t max,
                                        std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
    std::vector<Delivery<T>> out;
    for (;;) {
      if (taken.empty()) return out;
      out.reserve(taken.size());
      for (QueueDelivery& d : taken)
        if (std::optional<Delivery<T>> one = decode(d)) out.push_back(std::move(*one));
      if (!out.empty()) return out;
      taken = queue_.take_many_json(max, left(deadline), stop);
    }
  }

  // `d` as a Delivery<T>, or nothing: its payload does not decode as T and
  // it was dead-lettered with the reason (or, the store away or the message
  // taken back meanwhile, left to its lease).
  static std::optional<Delivery<T>> decode(QueueDelivery& d) {
    std::string why;
    try {
      T value = detail::parse_stored_json(d.payload()).template get<T>();
      return Delivery<T>(std::move(d), std::move(value));
    } catch (const nlohmann::json::exception& e) {
      why = "its payload does not decode (written by another version?): " + std::string(e.what());
    } catch (const std::invalid_argument& e) {
      why = "its payload does not decode: " + std::string(e.what());
    }
    try {
      d.dead(why);
    } catch (const Error&) {
      // not settled: the queue takes it back once its lease runs out, and tries again
    }
    return std::nullopt;
  }

  static std::optional<Delivery<T>> first(std::vector<Delivery<T>> taken) {
    if (taken.empty()) return std::nullopt;
    return std::move(taken.front());
  }

  static std::chrono::milliseconds left(std::chrono::steady_clock::time_point deadline) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max(ms, std::chrono::milliseconds(0));
  }

  Queue queue_;
};

}  // namespace weave
