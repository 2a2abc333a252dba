// Internals shared by the files of src/lock: the client's shared state, lease
// construction and state changes, the call chain, the watchdog.
#pragma once

#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/process.h"
#include "core/striped.h"
#include "weave/lease.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

using Clock = std::chrono::steady_clock;

struct WEAVE_API ClientShared {
  ClientShared() = default;
  ClientShared(const ClientShared&) = delete;
  // Made before fork(), dropped in the child: its backend's threads and
  // connections are the parent's; it is left alone, never torn down here.
  ~ClientShared() {
    if (pid != current_pid()) new std::shared_ptr<LockBackend>(std::move(backend));
  }
  pid_t pid = current_pid();  // the process that made it
  LockOptions options;
  std::shared_ptr<LockBackend> backend;
  bool in_process = false;  // `backend` is a mem:// table: a call costs well under a clock reading
  // LockStats, counted by every copy of the client and by its leases, each
  // thread in a stripe of its own, summed by stats().
  struct alignas(64) Counters {
    std::atomic<std::uint64_t> acquired{0}, reentered{0}, busy{0}, errors{0}, released{0}, lost{0},
        release_failures{0};
    std::atomic<std::int64_t> acquiring_us{0};
  };
  using Stats = StripedCounters<Counters>;
  mutable Stats stats;
  Counters& counters() const noexcept { return stats.mine(); }  // count with Stats::add_to
  std::chrono::milliseconds renew_interval() const noexcept {
    auto r = options.renew_interval.count() > 0 ? options.renew_interval
                                                : options.watchdog_lease / 3;
    return r.count() > 0 ? r : std::chrono::milliseconds(1);
  }
};

// One link of the (immutable, shareable) chain of leases held by a call.
// Whoever holds a node holds its lease: a lease's first link lives inside
// the lease (LeaseState::link_, no allocation per call), a further one in an
// allocation that keeps the lease (LeaseControl::chain_link).
struct WEAVE_API ChainNode {
  Lease* lease = nullptr;
  std::shared_ptr<const ChainNode> parent;
};

// What a Lease is (weave/lease.h holds no data): made by LockClient with one
// std::make_shared, so a lease costs one allocation.
struct WEAVE_API LeaseState final : Lease {
  LeaseState() noexcept {}  // user-provided: make_shared skips zero-filling the object first
  ~LeaseState() = default;

  std::string key_;
  std::vector<std::pair<std::string, std::uint64_t>> more_;  // multi-key: the other keys, tokens
  LockType type_ = LockType::reentrant;
  std::string owner_;
  std::uint64_t fence_ = 0;
  bool watchdog_ = false;
  bool on_expiry_ = false;  // Release::on_expiry
  std::chrono::milliseconds lease_time_{0};
  std::chrono::milliseconds max_hold_{0};
  Clock::time_point acquired_at_;
  std::atomic<Clock::rep> expires_at_{0};
  // kLost | the number of holds (0 once released): one word, so a release
  // and a loss decide in one order.
  static constexpr std::uint32_t kLost = 1u << 31;
  std::atomic<std::uint32_t> state_{1};
  std::atomic<bool> lost_reported_{false};  // on_lost called
  std::shared_ptr<const ClientShared> client_;  // backend + options
  mutable std::mutex mutex_;         // guards the fields below (and the setting of kLost)
  // Made by the first stop_token() (a std::stop_source allocates): most
  // leases are never asked for one.
  mutable std::stop_source stop_{std::nostopstate};
  std::string cause_;
  bool hold_limit_ = false;  // lost because it was held past max_hold

  // The watchdog's entry (watchdog.cpp), guarded by the lock of shard
  // `wd_shard_` (the acquiring thread's, set before the lease is handed
  // out); `wd_asked_` lets one watch() in. The entry of a lease watched from
  // its acquisition keeps it (wd_keep_); a bare entry (a fixed-ttl lease
  // asked for its stop token) does not: its last release unlinks it.
  std::atomic<bool> wd_asked_{false};
  int wd_shard_ = 0;
  bool wd_linked_ = false;
  LeaseState* wd_prev_ = nullptr;
  LeaseState* wd_next_ = nullptr;
  Clock::time_point wd_due_;
  std::string wd_renew_error_;            // why the last renewal failed ("" if it did not)
  std::shared_ptr<LeaseState> wd_keep_;  // the entry keeps the lease alive

  // The lease's first link in a call chain (LeaseControl::chain_link); its
  // parent is the chain the lease was first pushed on (older leases: no cycle).
  std::atomic<bool> link_taken_{false};
  ChainNode link_;

  Clock::time_point expires_at() const noexcept {
    return Clock::time_point(Clock::duration(expires_at_.load(std::memory_order_acquire)));
  }
};

inline LeaseState& state(Lease& l) noexcept { return static_cast<LeaseState&>(l); }
inline const LeaseState& state(const Lease& l) noexcept { return static_cast<const LeaseState&>(l); }


// LockOptions::validate() without the URL's scheme: for a client given its
// backend (options.cpp).
WEAVE_API void validate_values(const LockOptions& o);

// LockBusy, or DuplicateCall (not retryable) for a release=on_expiry spec:
// such a lock guards against duplicate calls.
[[noreturn]] WEAVE_API void throw_busy(const LockSpec& spec, const std::string& key, std::chrono::milliseconds waited);

// default_lock_client() without the copy: this thread's copy, refreshed
// when configure_locks() changes it or after fork().
WEAVE_API LockClient& thread_default_client();

// A unique owner token: a random per-thread prefix (libuuid) and a counter.
WEAVE_API std::string new_owner_token();

struct WEAVE_API LeaseControl {
  static const ClientShared& client(const LeaseState& l) { return *l.client_; }
  static void set_expires_at(LeaseState& l, Clock::time_point t) {
    l.expires_at_.store(t.time_since_epoch().count(), std::memory_order_release);
  }
  static bool released(const LeaseState& l) {
    return (l.state_.load(std::memory_order_acquire) & ~LeaseState::kLost) == 0;
  }
  static bool is_lost(const LeaseState& l) {
    return (l.state_.load(std::memory_order_acquire) & LeaseState::kLost) != 0;
  }
  // Marks the lease lost (once) and fires its stop_token; on_lost / on_event
  // come from report_lost. Ignored after release unless `even_if_released`.
  // True when this call marked it.
  static bool record_lost(LeaseState& l, const std::string& cause, bool even_if_released = false,
                          bool hold_limit = false);
  // record_lost() that leaves firing the stop token to the caller (to do
  // outside a lock of its own: the token's callbacks may release leases).
  // Returns the token's source (none when not marked or never asked for).
  static std::stop_source mark_lost(LeaseState& l, const std::string& cause, bool even_if_released, bool hold_limit,
                                    bool& marked);
  // When the watchdog stops renewing: acquired_at + max_hold (max() without).
  static Clock::time_point hold_deadline(const LeaseState& l) noexcept;
  // Why the lease counts as lost at `now` by its local deadlines (its expiry,
  // its max_hold), or "" while within them; `hold_limit` says which.
  static std::string deadline_cause(const LeaseState& l, Clock::time_point now, bool& hold_limit);
  // record_lost() when a deadline has passed, with on_lost / on_event on the
  // LostNotifier thread (drop_hold reports on its own). True when the lease
  // is lost (by this call or before). Cheap while within the deadlines.
  static bool check_deadlines(LeaseState& l, Clock::time_point now, bool even_if_released = false) noexcept;
  // For the watchdog thread: record_lost(), then on_lost / on_event on the
  // LostNotifier thread, so a slow callback cannot delay renewals.
  static void mark_lost_later(const std::shared_ptr<LeaseState>& l, const std::string& cause,
                              bool hold_limit = false);
  // Calls on_lost then on_event for a lost lease, once per lease, on this
  // thread (a throwing callback is ignored).
  static void report_lost(LeaseState& l);

 private:
  // Calls f with what a lost lease is reported as: HoldLimitExceeded when it
  // was held past max_hold, else LeaseLost.
  template <class F>
  static void as_lost_error(const LeaseState& l, F&& f);
  // A failed backend release: counted, sent to on_event, thrown per
  // release_failure_policy when `may_throw`.
  static void release_failed(const LeaseState& l, const std::string& key, const std::string& cause,
                             bool may_throw);

 public:
  // Another hold for a reentrant acquisition; false when already released.
  // Throws LeaseLost when the lease was lost.
  static bool add_hold(LeaseState& l);
  // Gives up one hold; the last one releases in the backend.
  static void drop_hold(const std::shared_ptr<Lease>& l, bool may_throw);

  // A copy of `c` for one thread's use (thread_default_client): the same
  // client, with a reference count of its own, so the leases of threads
  // using the default client do not all count on one cache line.
  static LockClient thread_copy(const LockClient& c);

  // The running call chain of this thread.
  static std::shared_ptr<const ChainNode>& head();
  // `lease` pushed on `parent`: the new head of a chain.
  // `fresh`: the caller is the lease's only holder (just acquired).
  static std::shared_ptr<const ChainNode> chain_link(const std::shared_ptr<Lease>& lease,
                                                     std::shared_ptr<const ChainNode> parent, bool fresh);
  // The lease behind a chain link, sharing the link's ownership.
  static std::shared_ptr<Lease> lease_of(const std::shared_ptr<const ChainNode>& link) {
    return std::shared_ptr<Lease>(link, link->lease);
  }
  static const std::shared_ptr<const ChainNode>& head_of(const CallContext& c) { return c.head_; }
};

// Runs on_lost / on_event for losses the watchdog found, in order, on its own
// thread (started on first use; at exit the pending ones run before it stops).
class WEAVE_API LostNotifier final : public BackgroundThread {
 public:
  static LostNotifier& instance();
  void post(std::shared_ptr<LeaseState> lease);

 private:
  friend LostNotifier& process_wide<LostNotifier>();
  LostNotifier() = default;
  void run() override;
  void forget_in_child() override;
  std::deque<std::shared_ptr<LeaseState>> queue_;
};

// The one background thread per process that renews watchdog leases (up to
// their max_hold) and notices leases whose deadline passed while held.
//
// Its entries are kept in shards, each with its own mutex and an intrusive
// list through the leases (no allocation, no global lock): a thread watches
// in the shard of its thread_slot(). watch() wakes the thread only for an
// entry due before the thread's next wake-up.
class WEAVE_API Watchdog final : public BackgroundThread {
 public:
  static Watchdog& instance();
  // Once per lease (a second call does nothing). Every watchdog lease is
  // watched from its acquisition (`fresh`: its acquirer is its only holder),
  // its entry keeping it; a fixed-ttl lease only when someone will hear of
  // its running out while held: an on_lost / on_event hook (watched from its
  // acquisition), or the holder's stop_token() (a bare entry: `keep` null).
  // A lease released in time then needs no entry at all.
  void watch(LeaseState& lease, std::shared_ptr<LeaseState> keep, bool fresh);
  // The shard a lease acquired on this thread is watched in.
  static int shard_of_this_thread() noexcept { return static_cast<int>(thread_slot() % kShards); }
  void unwatch(LeaseState& lease);
  // The lease as its entry holds it, or null when it is not watched.
  std::shared_ptr<LeaseState> entry_of(LeaseState& lease);
  // Number of leases watched (tests).
  std::size_t size();

 private:
  friend Watchdog& process_wide<Watchdog>();
  Watchdog() = default;
  struct alignas(64) Shard {
    SpinLock mutex;
    LeaseState* head = nullptr;
    std::size_t count = 0;
    // No entry of the shard is due before this (it may be earlier than the
    // earliest entry: the thread then looks once more).
    std::atomic<Clock::rep> earliest{Clock::time_point::max().time_since_epoch().count()};
  };
  static constexpr std::size_t kShards = 32;
  void run() override;
  void forget_in_child() override;
  void process(std::vector<std::shared_ptr<LeaseState>>& due);
  static void link(Shard& sh, LeaseState& l);
  static void unlink(Shard& sh, LeaseState& l);  // under sh.mutex; the caller drops wd_keep_ after

  Shard shards_[kShards];
  std::unordered_set<const LockBackend*> coalesce_;  // run(): backends with a lease due
  std::vector<std::stop_source> stops_;              // run(): tokens of bare entries found lost
  // When the thread wakes next; min() while it is awake (watch() need not wake it).
  std::atomic<Clock::rep> wake_at_{Clock::time_point::max().time_since_epoch().count()};
};

}  // namespace weave::detail
