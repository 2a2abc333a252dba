// The one lease under every feature: a lock's lease, a dedupe claim, a cache
// fill or refresh claim and a queue delivery are each a
// LeaseCore, renewed by the one Renewer (core/renewer.h) in batches per
// store, lost the same way, reported through the same LostNotifier.
//
//   struct Claim final : LeaseCore, weave::DedupeClaim {   // made on the acquiring thread
//     Claim(std::string key, milliseconds lease, Clock::time_point sent, std::shared_ptr<const RenewGroup> group)
//         : LeaseCore([&](Terms& t) {                    // its terms, once, at construction
//             t.key = std::move(key);
//             t.owner = unique_token();
//             t.lease_time = lease;
//             t.renew_every = renew_interval(lease);      // 0 and no group: a fixed ttl
//             t.acquired_at = sent;
//             t.group = std::move(group);                 // who renews it (its store)
//           }), DedupeClaim(static_cast<LeaseCore&>(*this)) {}
//   };
//   Renewer::instance().watch(*claim, claim, /*fresh=*/true);
//   ... the call runs; claim->stop_token() fires if it is lost ...
//   claim->drop_hold();                      // the last hold: released, unwatched
//
// A feature adds what only it knows: its own lease data, the words of a loss
// (ran_out_cause, gone_cause), and how a loss is counted and reported
// (count_lost, report_lost).
#pragma once

#include <algorithm>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/process.h"
#include "weave/abi.h"
#include "weave/event.h"

namespace WEAVE_NAMESPACE {
class HeldLease;
}

namespace WEAVE_NAMESPACE::detail {

class LeaseCore;

// The leases one store holds for one owner of settings (a lock client, a
// dedupe runtime, a cache runtime): the renewer renews the due leases of a
// group in one batch.
class RenewGroup {
 public:
  // One answer per lease: true while the store still holds it for its owner
  // (then extended by its lease time). Throws when the store did not
  // answer: the leases keep their deadlines and are tried again.
  virtual void renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const = 0;
  // Whose leases these are ("lock", "cache", ...) and the hook its options
  // name (empty: the process handler): a renewal that fails is an Event.
  virtual std::string_view feature() const noexcept = 0;
  virtual const EventHook& event_hook() const noexcept = 0;
  // An owning reference to this group (shared_from_this()), for whoever
  // may outlive the holds of a lease that borrowed it (Terms::group_lent).
  virtual std::shared_ptr<const RenewGroup> owning_ref() const = 0;

 protected:
  ~RenewGroup() = default;
};

class LeaseCore {
 public:
  using Clock = std::chrono::steady_clock;

  // What the feature says of the lease before it hands it out.
  struct Terms {
    std::string key;
    std::string owner;  // unique_token(), or the store's token for it
    std::chrono::milliseconds lease_time{0};
    // Renewed this often while held; 0 for a fixed ttl (never renewed).
    std::chrono::milliseconds renew_every{0};
    Clock::time_point acquired_at;  // when the acquiring request was sent
    // The store's first term when shorter than lease_time (0: lease_time),
    // the first renewal then due a third of it after acquired_at: a
    // semaphore permit a release granted to a waiter (which may have died
    // since) lasts only a place in line until that waiter renews it.
    std::chrono::milliseconds first_term{0};
    // Renewals stop here (a lock's max_hold); the lease then runs out.
    Clock::time_point hold_deadline = Clock::time_point::max();
    std::shared_ptr<const RenewGroup> group;  // who renews it (its store); null only for a fixed ttl
    // `group` is lent (an aliasing pointer without a count): the acquiring
    // holder keeps the group alive until it gives up its hold (the lock
    // interceptor's call does), so the lease takes no count, two atomic
    // operations fewer per call. A later hold takes an owning reference
    // (add_hold), and so does whoever reports or renews the lease outside
    // its holds (lent_group_ref()).
    bool group_lent = false;
  };
  // Set once, by the constructor (LeaseCore(fill)): nobody else sees the lease yet.
  const Terms& terms() const noexcept { return terms_; }
  // How often a lease of `lease` is renewed when its feature has no setting
  // for it: every third of it (a renewal may fail twice before it runs out).
  static constexpr std::chrono::milliseconds renew_interval(std::chrono::milliseconds lease) noexcept {
    return std::max(lease / 3, std::chrono::milliseconds(1));
  }

  // Redlock's margin for the drift between two clocks over one lease: 1 % of
  // it + 2 ms (at most half of it). The assumption: no clock runs more than
  // 1 % faster than another's over a lease.
  static constexpr std::chrono::milliseconds clock_drift(std::chrono::milliseconds lease) noexcept {
    return std::min(lease / 100 + std::chrono::milliseconds(2), lease / 2);
  }
  // When a lease (or its renewal) whose request was sent at `sent` ends, on this clock.
  Clock::time_point deadline_after(Clock::time_point sent) const noexcept { return sent + terms_.lease_time - drift_; }
  // A new lease (its terms set) whose request was sent at `sent`: its drift
  // margin (none when the store is `in_process`) and its local deadline.
  void start_deadline(Clock::time_point sent, bool in_process) noexcept {
    drift_ = in_process ? std::chrono::milliseconds(0) : clock_drift(terms_.lease_time);
    if (terms_.first_term.count() > 0)
      set_expires_at(sent + terms_.first_term - (in_process ? std::chrono::milliseconds(0) : clock_drift(terms_.first_term)));
    else
      set_expires_at(deadline_after(sent));
  }
  // When the renewer first renews it (renewed leases).
  Clock::time_point first_renewal() const noexcept {
    return terms_.acquired_at +
           (terms_.first_term.count() > 0 ? renew_interval(terms_.first_term) : terms_.renew_every);
  }

  bool renewed() const noexcept { return terms_.renew_every.count() > 0; }
  Clock::time_point expires_at() const noexcept {
    return Clock::time_point(Clock::duration(expires_at_.load(std::memory_order_acquire)));
  }
  void set_expires_at(Clock::time_point t) noexcept {
    expires_at_.store(t.time_since_epoch().count(), std::memory_order_release);
  }

  // ---- holds and loss ----
  // seq_cst: Renewer::watch() reads it as one side of a Dekker with
  // drop_hold() (an acquire load could miss the release while unwatch()
  // misses wd_asked_); on x86 and ARMv8 it costs what an acquire load does.
  bool released() const noexcept { return (state_.load() & kHolds) == 0; }
  bool is_lost() const noexcept { return (state_.load(std::memory_order_acquire) & kLost) != 0; }
  // Another hold (a reentrant acquisition): not once released or lost.
  enum class Hold { added, released, lost };
  Hold add_hold() noexcept;
  // Gives up one hold; true for the last one (the lease is released: the
  // caller gives it back to the store). Unwatches it then.
  bool drop_hold() noexcept;
  // The holder is about to send its last store call for the lease while it
  // still holds it (a dedupe finish, a cache fill, a queue ack): renewals
  // stop, and from now on only that call's answer can find the lease lost. A
  // renewal in flight that finds the key already settled is not a loss.
  void settle() noexcept;
  bool settling() const noexcept { return settling_.load(); }

  // Told of the loss like a stop token's callback, for a holder that must
  // hear of it on every lease it takes (an asynchronous call cancels its
  // body, src/lock/asio/): no stop source to allocate, no callback to lock
  // in and out. `lost(target)` runs once, on the thread that found the loss,
  // if `target` still lives (held for the call: a lease must not keep its
  // listener alive, which may keep the lease); the listener is kept until
  // the lease is destroyed, so it must ignore a loss it no longer cares about.
  struct LossListener {
    void (*lost)(void* target, std::uint64_t tag) noexcept = nullptr;
    std::weak_ptr<void> target;
    std::uint64_t tag = 0;  // handed back: which use of a reused target listened
    void fire() const noexcept {
      if (!lost) return;
      if (const std::shared_ptr<void> t = target.lock()) lost(t.get(), tag);
    }
  };
  // Fires `l` at once when the lease is lost already. A fixed-ttl lease is
  // watched from then on, so that `l` hears of its expiry.
  void listen_for_loss(LossListener l) noexcept;
  // What a loss fires, taken under the lease's lock and fired outside it
  // (callbacks may release leases): the stop token's source, if one was
  // made, and the listeners not fired yet.
  struct LossSignal {
    std::stop_source stop{std::nostopstate};
    LossListener listener;
    std::vector<LossListener> more;
    void fire() noexcept;
  };

  // Marks the lease lost (once) and fires its stop token and listeners;
  // ignored after release unless `even_if_released`. True when this call
  // marked it.
  bool record_lost(const std::string& cause, bool even_if_released = false, bool hold_limit = false);
  // record_lost() that leaves firing to the caller (outside a lock of its
  // own). Returns what to fire (nothing when not marked).
  LossSignal mark_lost(const std::string& cause, bool even_if_released, bool hold_limit, bool& marked);
  // Lost by its local deadlines at `now` (record_lost() once one passed, and
  // reported on the LostNotifier thread). Cheap while within them. True once
  // lost, and then every stop token handed out has fired.
  // (Within them, the common case, is inline: no call.)
  bool check_deadlines(Clock::time_point now, bool even_if_released = false) noexcept {
    if (!is_lost() && now < expires_at() && now < terms_.hold_deadline) [[likely]]
      return false;
    return check_deadlines_passed(now, even_if_released);
  }
  // For the renewer: record_lost(), then the report on the LostNotifier
  // thread, so a slow on_event cannot delay renewals. The caller keeps the
  // group alive (a kept entry, renewer.h's KeptLease).
  static void mark_lost_later(const std::shared_ptr<LeaseCore>& l, const std::string& cause, bool hold_limit = false);
  // For one who may outlive the lease's holds: an owning reference to its
  // group when the lease only borrowed it (owning_ref()), else null (the
  // lease keeps its own). Only while the group is known to live: the lease
  // held by the caller, or watched (under the renewer's shard lock), or its
  // group kept by the caller.
  std::shared_ptr<const RenewGroup> lent_group_ref() const {
    return terms_.group_lent ? terms_.group->owning_ref() : nullptr;
  }
  // Counts and reports the loss, once per lease, on this thread.
  void report_lost_once() noexcept;
  // Why it counts as lost at `now` by its deadlines, or "" within them;
  // `hold_limit`: by the hold deadline (it came first).
  std::string deadline_cause(Clock::time_point now, bool& hold_limit) const;
  bool hold_limit() const;  // lost by the hold deadline
  std::string cause() const;
  // Tells `hook` of the loss as every feature's lost lease is told:
  // EventKind::lease_lost, a weave::LeaseLost naming the key and saying
  // `consequence` (what the loss means for the call), `view` the lease.
  void report_to(const EventHook& hook, std::string_view feature, const HeldLease& view,
                 std::string_view consequence) const noexcept;
  // HeldLease::stop_token(): made on first use; a fixed-ttl lease asked for
  // one is watched from then on, so the token fires at its expiry.
  std::stop_token stop_token() noexcept;

 protected:
  // Takes its renewer shard from the constructing thread, the acquirer (a
  // lease may later be watched or unwatched from any thread: it stays there).
  // User-provided: make_shared skips zero-filling the object first.
  // The one way to give a lease its terms: `fill(terms)` writes them in place,
  // on the acquiring thread (a lock's lease moves its strings once, not twice).
  template <class Fill>
    requires std::is_invocable_v<Fill&, Terms&>
  explicit LeaseCore(Fill&& fill) noexcept(std::is_nothrow_invocable_v<Fill&, Terms&>) : LeaseCore() {
    fill(terms_);
  }
  // Destroyed as the feature's type. A lease freed without its last
  // drop_hold() leaves no entry for the renewer to read afterwards.
  ~LeaseCore();

  // The words of a loss by the deadline (the lease time ran out before a
  // renewal, or the fixed ttl ran out while held).
  virtual std::string ran_out_cause() const;
  // The words of a loss a renewal found (expired, or another owner's).
  virtual std::string gone_cause() const;
  // The words of a loss by the deadline while renewals failed with `error`.
  static std::string renewal_failed_cause(const std::string& error);
  // Counts a loss (a feature's stats), once, when it is marked.
  virtual void count_lost() noexcept {}
  // Tells the feature's hooks of the loss, once (report_lost_once()).
  virtual void report_lost() noexcept {}

 private:
  friend class Renewer;
  // (the fill constructor's first step)
  LeaseCore() noexcept;
  Terms terms_;
  pid_t pid_ = current_pid();  // the process that acquired it
  // How much sooner than `sent + lease_time` this process takes the lease
  // to end: clock_drift() for a store in another process, whose clock may
  // run a little faster than this one; 0 for one in this process.
  std::chrono::milliseconds drift_{0};

  // The renewer's entry (renewer.cpp), guarded by its shard's lock (the
  // Renewer's, which the analysis cannot name from here).
  std::atomic<bool> wd_asked_{false};  // lets one watch() in; cleared once released and unwatched
  const int wd_shard_;                 // the constructing (acquiring) thread's
  bool wd_linked_ = false;
  LeaseCore* wd_prev_ = nullptr;
  LeaseCore* wd_next_ = nullptr;
  Clock::time_point wd_due_;
  std::string wd_renew_error_;          // why the last renewal failed ("" if it did not)
  std::shared_ptr<LeaseCore> wd_keep_;  // a kept entry keeps the lease alive

  void fire_stop() noexcept;  // fires what a loss fires, if it was not fired yet
  // check_deadlines() once lost or past a deadline.
  bool check_deadlines_passed(Clock::time_point now, bool even_if_released) noexcept;
  LossSignal take_loss_signal_locked() WEAVE_REQUIRES(mutex_);
  // A fixed-ttl lease (never renewed, so not watched) is watched from now on,
  // so that its expiry while held is found: for a stop token or a listener.
  void watch_for_expiry() noexcept;
  static constexpr std::uint32_t kLost = 1u << 31;
  // Pins: threads reading a lent group outside a hold of their own (a loss
  // counted, a hold's owning reference taken). A holder giving up its hold
  // waits for them, as its call keeps the group alive.
  static constexpr std::uint32_t kPin = 1u << 24;
  static constexpr std::uint32_t kPins = kLost - kPin;
  static constexpr std::uint32_t kHolds = kPin - 1;
  void unpin() noexcept;
  std::atomic<Clock::rep> expires_at_{0};
  // kLost | pins | the number of holds (0 once released): one word, so a
  // release and a loss decide in one order.
  std::atomic<std::uint32_t> state_{1};
  std::atomic<bool> lost_reported_{false};
  std::atomic<bool> settling_{false};  // seq_cst: read by the renewer after the store's answer
  mutable Mutex mutex_;  // guards what follows (and the setting of kLost)
  // What only a lease that is lost, listened to or failing to renew needs:
  // made on first use, so the common lease (taken, held briefly, given back)
  // neither builds nor destroys it.
  struct LossState {
    // Made by the first stop_token() (a std::stop_source allocates): most
    // leases are never asked for one.
    std::stop_source stop{std::nostopstate};
    LossListener listener;                    // listen_for_loss(): the first,
    std::vector<LossListener> more_listeners;  // and those of reentrant holds
    std::string cause;
    bool hold_limit = false;
    // While renewals fail: the last one's error (the renewer sets it with
    // wd_renew_error_), so a holder that finds the deadline passed first tells
    // the same cause as the renewer would.
    std::string renew_error;
  };
  std::unique_ptr<LossState> loss_ WEAVE_GUARDED_BY(mutex_);
  // A lent group's owning reference, taken by the first hold after the
  // acquiring one (that hold may outlast the lender's); never dropped
  // before the lease, so once set (group_kept_) later holds pin nothing.
  std::shared_ptr<const RenewGroup> group_keep_ WEAVE_GUARDED_BY(mutex_);
  std::atomic<bool> group_kept_{false};
  LossState& loss_locked() WEAVE_REQUIRES(mutex_) {
    if (!loss_) loss_ = std::make_unique<LossState>();
    return *loss_;
  }
};

}  // namespace weave::detail
