// The process-wide state of delay queues: options, the store opener for the
// URL, one QueueState per queue name (its store and its deliveries' renewal),
// and the deliveries themselves (core leases).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/feature_runtime.h"
#include "core/lease_core.h"
#include "core/metrics.h"
#include "core/process.h"
#include "core/striped.h"
#include "queue/queue_store.h"
#include "weave/queue.h"

namespace WEAVE_NAMESPACE::detail {

// Opens queue `name` of one store (a URL's connection, shared by its queues).
using QueueOpener = std::function<std::shared_ptr<QueueStore>(std::string_view name)>;

class QueueState;

// weave_queue_* of one queue name (weave/metrics.h), for the whole process
// (a reconfiguration keeps them).
struct alignas(64) QueueCountStripe {
  std::atomic<std::uint64_t> offered{0}, offered_existing{0}, delivered{0}, redelivered{0}, acked{0}, retried{0},
      failed{0}, dead_lettered{0}, leases_lost{0};
};
struct QueueSeries {
  StripedCounters<QueueCountStripe> counts;
  DurationHistogram lateness;    // due time to delivery, by the store's clock (ms)
  DurationHistogram processing;  // delivery to its settle (ack, retry, fail, dead)
};
QueueSeries& queue_series(std::string_view name);

// A taken message (weave::QueueDelivery's state): a core lease on it,
// renewed by the one Renewer through its QueueState until settled.
class HeldDelivery final : public LeaseCore, public HeldLease {
 public:
  HeldDelivery(std::shared_ptr<QueueState> queue, QueueMessage message, std::chrono::milliseconds lease,
               Clock::time_point sent);
  using LeaseCore::expires_at;
  using LeaseCore::stop_token;

  const std::shared_ptr<QueueState> queue;
  const QueueMessage message;
  bool settled = false;

 private:
  std::string ran_out_cause() const override;
  std::string gone_cause() const override;
  void count_lost() noexcept override;
  void report_lost() noexcept override;  // on_event: lease_lost
};

// One queue of one runtime: its store, and the renewal of its deliveries
// (the Renewer sends one renew script per period for all of them).
class QueueState final : public RenewGroup, public std::enable_shared_from_this<QueueState> {
 public:
  QueueState(std::string name, std::shared_ptr<QueueStore> store, const QueueOptions& options);
  const std::string name;
  const pid_t pid = current_pid();  // the process whose connections it uses
  const QueueOptions& options() const noexcept { return options_; }
  QueueStore& store() noexcept { return *store_; }
  QueueSeries& series;  // queue_series(name)

  // A waiter on the queue's wake-ups. The first also subscribes this process
  // (kept for the state's life), so later ones take no round trip.
  std::unique_ptr<QueueWaiter> prepare_wait();
  // prepare_wait() once this process is subscribed, else null.
  std::unique_ptr<QueueWaiter> waiter_if_subscribed();
  // Wakes every consumer of the queue waiting in this process (a stop was
  // requested): the followers here, the leader through the store (which
  // wakes other processes' leaders too: one spurious take each).
  void interrupt();
  std::shared_ptr<HeldDelivery> hold(QueueMessage message, LeaseCore::Clock::time_point sent);
  // The store's counts per state (its reclaim's dead letters reported).
  QueueCounts counts();
  // A dead_lettered event for message `id` (`reason`: its last error).
  void report_dead(std::string_view id, std::string_view reason) const noexcept;
  // Those of the store's reclaim (its lease ran out on its last attempt).
  void report_reclaimed(const std::vector<std::string>& ids) const noexcept;

  // The idle consumers of this queue in this process: one leads (waits on
  // the store: a wake-up or the first due time), the others wait here, so a
  // wake-up costs the process one take, not one per consumer. A consumer
  // that got a message hands on to one follower, which looks at once (more
  // may be due). RAII per take_json() call.
  class IdleTurn {
   public:
    explicit IdleTurn(QueueState& q) noexcept : q_(q) {}
    ~IdleTurn();
    IdleTurn(const IdleTurn&) = delete;
    IdleTurn& operator=(const IdleTurn&) = delete;
    enum class Next { lead, look, timed_out };
    // lead: this consumer leads (it waits on the store). Else it waited as a
    // follower: handed on to, or the leader left (look again), or `deadline` came.
    Next lead(LeaseCore::Clock::time_point deadline);
    // This consumer got a message: it stops leading and hands on to a follower.
    void got_message() noexcept;

   private:
    QueueState& q_;
    bool leading_ = false;
  };

 private:
  void renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const override;
  std::string_view feature() const noexcept override { return "queue"; }
  const EventHook& event_hook() const noexcept override { return options_.on_event; }
  std::shared_ptr<const RenewGroup> owning_ref() const override { return shared_from_this(); }
  const QueueOptions options_;  // a copy: a reconfiguration leaves it
  std::shared_ptr<QueueStore> store_;
  Mutex mutex_;
  std::unique_ptr<QueueWaiter> anchor_ WEAVE_GUARDED_BY(mutex_);  // keeps the wake subscription
  // IdleTurn's state.
  std::condition_variable idle_cv_;
  bool led_ WEAVE_GUARDED_BY(mutex_) = false;
  int followers_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::uint64_t handed_on_ WEAVE_GUARDED_BY(mutex_) = 0;
};

class QueueRuntime {
 public:
  explicit QueueRuntime(QueueOptions options);
  const QueueOptions& options() const noexcept { return options_; }
  // The state of queue `name` (made on first use, kept for the runtime's life).
  std::shared_ptr<QueueState> state(const std::string& name);
  // QueueStore::ticking_queues() of this runtime's store, asked through a
  // store opened for that alone: no queue state is kept for it (so none is
  // read at every metrics scrape).
  std::vector<std::string> ticking_queues();
  // weave_queue_* of every queue of this runtime: the series, and each
  // queue's counts per state read from its store (queue_metrics.cpp).
  void write_metrics(MetricsWriter& w);

 private:
  QueueOptions options_;
  QueueOpener open_;
  Mutex mutex_;
  std::map<std::string, std::shared_ptr<QueueState>, std::less<>> queues_ WEAVE_GUARDED_BY(mutex_);
};

using QueueRuntimeSlot = RuntimeSlot<QueueRuntime, QueueOptions>;
QueueRuntimeSlot& queue_runtime_slot();

// What the queue's public types keep to themselves, for Weave's own code
// (queue.cpp, the schedule worker).
struct QueueAccess {
  static QueueDelivery delivery(std::shared_ptr<HeldDelivery> held);
  static HeldDelivery* held(const QueueDelivery& d);  // null once moved from
  static const std::shared_ptr<HeldDelivery>& shared(const QueueDelivery& d);
  // The queue's state in this process (Queue::state(): anew in a fork()ed child).
  static std::shared_ptr<QueueState> state(Queue& q);
};

// Binds a store URL scheme to a queue store (mem is built in; the Redis
// schemes register when Weave::queue_redis is linked).
using QueueStoreFactory = std::function<QueueOpener(const QueueOptions&)>;
void register_queue_store(std::string scheme, QueueStoreFactory factory);

// Throws QueueError (naming `what` and the queue) for an empty name or id,
// one over 200 bytes, or one with control or non-UTF-8 bytes.
void check_queue_text(std::string_view queue, std::string_view what, std::string_view text);

// A new random id (a UUID's text): a message's default id, a producer's.
std::string new_id();

}  // namespace weave::detail
