// The one thread per process that keeps every feature's leases alive
// (core/lease_core.h), and the one that tells their owners of a loss.
//
// Renewer: renews every due renewed lease with one RenewGroup::renew() per
// group (one round trip per store per period, not per lease), and marks lost
// the leases whose renewal failed or whose deadline passed while still held
// (a fixed ttl ran out, a pause outlasted the lease, a hold deadline was
// reached). It sleeps until the earliest due lease; entries live in shards,
// each with its own spin lock and an intrusive list through the leases (no
// allocation, no global lock): a thread watches in the shard of its
// thread_slot(). watch() wakes the thread only for an entry due before its
// next wake-up.
//
// LostNotifier: runs the losses' reports (a feature's on_lost / on_event),
// in order, on its own thread, so a slow hook never delays a renewal.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <unordered_set>
#include <vector>

#include "core/lease_core.h"
#include "core/process.h"
#include "core/striped.h"

namespace WEAVE_NAMESPACE::detail {

// A lease kept outside its holds (for a renewal, for a loss report), and
// its group when the lease only borrowed it (LeaseCore::Terms::group_lent):
// made while the group is known to live (the lease watched, or its group
// kept), both then live until it is dropped.
struct KeptLease {
  std::shared_ptr<LeaseCore> lease;
  std::shared_ptr<const RenewGroup> lent_group;
  KeptLease() = default;
  explicit KeptLease(std::shared_ptr<LeaseCore> l)
      : lease(std::move(l)), lent_group(lease ? lease->lent_group_ref() : nullptr) {}
};

class Renewer final : public BackgroundThread {
 public:
  using Clock = LeaseCore::Clock;
  // After the stop at exit nothing is renewed any more (the leases run out
  // on their own). Inline: every watched lease asks for it twice.
  static Renewer& instance() { return process_wide<Renewer>(); }
  // Once per lease (a second call does nothing). A renewed lease is watched
  // from its acquisition (`fresh`: its acquirer is its only holder), its
  // entry keeping it (`keep`); a fixed-ttl lease only when someone will hear
  // of its running out while held: a hook (watched from its acquisition) or
  // the holder's stop_token() (a bare entry: `keep` null).
  void watch(LeaseCore& lease, std::shared_ptr<LeaseCore> keep, bool fresh);
  // The shard a lease made on this thread is watched in (LeaseCore's
  // constructor takes it).
  static int shard_of_this_thread() noexcept { return static_cast<int>(thread_slot() % kShards); }
  // `released`: its last hold is gone (LeaseCore::drop_hold()), for good.
  void unwatch(LeaseCore& lease, bool released = false);
  // The lease as its entry holds it, or none when it is not watched.
  KeptLease entry_of(LeaseCore& lease);
  // Number of leases watched (tests).
  std::size_t size();

 private:
  friend Renewer& process_wide<Renewer>();
  Renewer() : BackgroundThread("weave-renew") {}
  struct alignas(64) Shard {
    SpinLock mutex;
    LeaseCore* head WEAVE_GUARDED_BY(mutex) = nullptr;
    std::size_t count WEAVE_GUARDED_BY(mutex) = 0;
    // No entry of the shard is due before this (it may be earlier than the
    // earliest entry: the thread then looks once more).
    std::atomic<Clock::rep> earliest{Clock::time_point::max().time_since_epoch().count()};
  };
  static constexpr std::size_t kShards = 32;
  void run() override;
  void forget_in_child() override WEAVE_NO_THREAD_SAFETY_ANALYSIS;  // (the child's one thread)
  void process(std::vector<KeptLease>& due);
  void renew_group(const RenewGroup& group, std::vector<std::shared_ptr<LeaseCore>>& leases);
  static void link(Shard& sh, LeaseCore& l) WEAVE_REQUIRES(sh.mutex);
  static void unlink(Shard& sh, LeaseCore& l) WEAVE_REQUIRES(sh.mutex);  // the caller drops wd_keep_ after

  Shard shards_[kShards];
  std::unordered_set<const RenewGroup*> coalesce_;  // run(): groups with a lease due
  std::vector<LeaseCore::LossSignal> losses_;       // run(): what bare entries found lost fire
  // When the thread wakes next; min() while it is awake (watch() need not wake it).
  std::atomic<Clock::rep> wake_at_{Clock::time_point::max().time_since_epoch().count()};
};

class LostNotifier final : public BackgroundThread {
 public:
  // Stopped at exit after running what is pending.
  static LostNotifier& instance();
  void post(KeptLease lease);

 private:
  friend LostNotifier& process_wide<LostNotifier>();
  LostNotifier() : BackgroundThread("weave-lost") {}
  void run() override;
  void forget_in_child() override WEAVE_NO_THREAD_SAFETY_ANALYSIS;  // (the child's one thread)
  std::deque<KeptLease> queue_ WEAVE_GUARDED_BY(mutex_);
};

}  // namespace weave::detail
