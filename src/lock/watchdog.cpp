// The lock watchdog: one thread per process. It sleeps until the earliest due
// lease (no polling), renews every due watchdog lease with one renew_batch()
// per backend, and marks lost the leases whose renewal failed or whose
// deadline passed while still held (a fixed ttl ran out, a pause outlasted
// the lease, max_hold was reached). Their on_lost / on_event callbacks run on
// the LostNotifier thread, never on this one.
#include <algorithm>
#include <map>
#include <new>

#include "internal.h"

namespace WEAVE_NAMESPACE::detail {

// After the stop at exit nothing is renewed any more (the leases run out on their own).
Watchdog& Watchdog::instance() { return process_wide<Watchdog>(); }

void Watchdog::forget_in_child() {
  // The parent's leases are renewed by the parent: forgotten here, not freed
  // (freeing could run code that expects their threads; each keeps itself
  // through its entry). A shard's mutex may have been held by a thread of
  // the parent, and its list half changed: neither is looked at again.
  for (Shard& sh : shards_) {
    sh.mutex.reset();
    sh.head = nullptr;
    sh.count = 0;
    sh.earliest.store(Clock::time_point::max().time_since_epoch().count());
  }
  coalesce_.clear();
  wake_at_.store(Clock::time_point::max().time_since_epoch().count());
}

// Stopped at exit after running what is pending.
LostNotifier& LostNotifier::instance() { return process_wide<LostNotifier>(); }

void LostNotifier::forget_in_child() {
  // The parent's pending callbacks are the parent's business: left alone.
  new std::deque<std::shared_ptr<LeaseState>>(std::move(queue_));
  queue_.clear();
}

void LostNotifier::post(std::shared_ptr<LeaseState> lease) {
  {
    std::lock_guard g(mutex_);
    if (stop_) return;
    queue_.push_back(std::move(lease));
    start_locked();
  }
  cv_.notify_one();
}

void LostNotifier::run() {
  std::unique_lock g(mutex_);
  for (;;) {
    cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing pending
    std::shared_ptr<LeaseState> lease = std::move(queue_.front());
    queue_.pop_front();
    g.unlock();
    LeaseControl::report_lost(*lease);  // may release leases, may be slow
    lease.reset();
    g.lock();
  }
}

void Watchdog::link(Shard& sh, LeaseState& l) {
  l.wd_prev_ = nullptr;
  l.wd_next_ = sh.head;
  if (sh.head) sh.head->wd_prev_ = &l;
  sh.head = &l;
  l.wd_linked_ = true;
  ++sh.count;
}

void Watchdog::unlink(Shard& sh, LeaseState& l) {
  if (l.wd_prev_)
    l.wd_prev_->wd_next_ = l.wd_next_;
  else
    sh.head = l.wd_next_;
  if (l.wd_next_) l.wd_next_->wd_prev_ = l.wd_prev_;
  l.wd_prev_ = l.wd_next_ = nullptr;
  l.wd_linked_ = false;
  --sh.count;
}

void Watchdog::watch(LeaseState& lease, std::shared_ptr<LeaseState> keep, bool fresh) {
  if (fresh) {
    lease.wd_asked_.store(true, std::memory_order_relaxed);  // published with the lease
  } else if (lease.wd_asked_.exchange(true)) {
    return;
  }
  const ClientShared& c = LeaseControl::client(lease);
  const Clock::time_point due =
      lease.renewed() ? std::min(lease.acquired_at() + c.renew_interval(), LeaseControl::hold_deadline(lease))
                      : lease.expires_at();
  const Clock::rep at = due.time_since_epoch().count();
  Shard& sh = shards_[lease.wd_shard_];
  {
    std::lock_guard g(sh.mutex);
    // Dekker with drop_hold(): it marks the lease released, then reads
    // wd_asked_ (unwatch); here wd_asked_ was set, then the release is read.
    if (!fresh && LeaseControl::released(lease)) return;
    lease.wd_due_ = due;
    lease.wd_keep_ = std::move(keep);
    link(sh, lease);
    if (at < sh.earliest.load(std::memory_order_relaxed)) sh.earliest.store(at);  // seq_cst: see run()
  }
  // Wake the thread only when this entry is due before it wakes anyway
  // (never while it is awake: it looks at every shard before it sleeps).
  if (at < wake_at_.load()) {
    {
      std::lock_guard g(mutex_);
      if (stop_) return;  // at exit: nothing is renewed any more
      start_locked();
    }
    cv_.notify_one();
  }
}

void Watchdog::unwatch(LeaseState& lease) {
  if (!lease.wd_asked_.load()) return;  // never watched (seq_cst: see watch())
  Shard& sh = shards_[lease.wd_shard_];
  std::shared_ptr<LeaseState> keep;
  {
    std::lock_guard g(sh.mutex);
    if (!lease.wd_linked_) return;
    unlink(sh, lease);
    keep = std::move(lease.wd_keep_);
  }
}

std::shared_ptr<LeaseState> Watchdog::entry_of(LeaseState& lease) {
  if (!lease.wd_asked_.load()) return nullptr;
  Shard& sh = shards_[lease.wd_shard_];
  std::lock_guard g(sh.mutex);
  return lease.wd_linked_ ? lease.wd_keep_ : nullptr;
}

std::size_t Watchdog::size() {
  std::size_t n = 0;
  for (Shard& sh : shards_) {
    std::lock_guard g(sh.mutex);
    n += sh.count;
  }
  return n;
}

void Watchdog::run() {
  constexpr Clock::rep kNever = Clock::time_point::max().time_since_epoch().count();
  constexpr Clock::rep kAwake = Clock::time_point::min().time_since_epoch().count();
  std::unique_lock lk(mutex_);
  std::vector<std::shared_ptr<LeaseState>> due;
  while (!stop_) {
    wake_at_.store(kAwake);
    const auto now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    due.clear();
    // Backends with a watchdog lease due now: their leases due within half a
    // renew interval are renewed in the same batch, so leases acquired at
    // different times coalesce into ~one batch per period instead of one
    // round trip per due time. Fixed-ttl leases are never taken early (their
    // due time is their expiry).
    coalesce_.clear();
    for (Shard& sh : shards_) {
      std::lock_guard g(sh.mutex);
      for (LeaseState* l = sh.head; l; l = l->wd_next_)
        if (l->wd_due_ <= now && l->renewed()) coalesce_.insert(LeaseControl::client(*l).backend.get());
    }
    for (Shard& sh : shards_) {
      std::lock_guard g(sh.mutex);
      Clock::time_point earliest = Clock::time_point::max();
      for (LeaseState* l = sh.head, *after; l; l = after) {
        after = l->wd_next_;
        bool take = l->wd_due_ <= now;
        if (take && !l->wd_keep_) {
          // A bare entry (a fixed-ttl lease) ran out while held: its holder
          // keeps it alive until its release, which unlinks it under this lock.
          bool hold_limit = false, marked = false;
          stops_.push_back(LeaseControl::mark_lost(*l, LeaseControl::deadline_cause(*l, now, hold_limit), false,
                                                   hold_limit, marked));
          unlink(sh, *l);
          continue;
        }
        if (!take && l->renewed() && l->wd_due_ != Clock::time_point::max() &&
            l->wd_due_ != LeaseControl::hold_deadline(*l)) {  // not renewed early: it stops there
          const ClientShared& c = LeaseControl::client(*l);
          take = l->wd_due_ - now <= c.renew_interval() / 2 && coalesce_.count(c.backend.get()) != 0;
        }
        if (take) {
          due.push_back(l->wd_keep_);
          l->wd_due_ = Clock::time_point::max();  // until processed and rescheduled
        } else {
          earliest = std::min(earliest, l->wd_due_);
        }
      }
      sh.earliest.store(earliest.time_since_epoch().count());
      next = std::min(next, earliest);
    }
    for (std::stop_source& stop : stops_)
      if (stop.stop_possible()) stop.request_stop();  // outside the shard locks (callbacks may release)
    stops_.clear();
    if (due.empty()) {
      // Dekker with watch(): it stores a shard's `earliest`, then reads
      // wake_at_; here wake_at_ is stored, then every `earliest` read. So
      // either watch() sees when we sleep until (and wakes us), or we see
      // its entry here and look again.
      wake_at_.store(next.time_since_epoch().count());
      bool missed = false;
      for (Shard& sh : shards_) missed = missed || sh.earliest.load() < next.time_since_epoch().count();
      if (missed) continue;
      if (next == Clock::time_point::max())
        cv_.wait(lk);
      else
        cv_.wait_until(lk, next);
      continue;
    }
    wake_at_.store(kAwake);
    lk.unlock();
    process(due);
    due.clear();  // drop our references outside the lock
    lk.lock();
  }
  wake_at_.store(kNever);
}

void Watchdog::process(std::vector<std::shared_ptr<LeaseState>>& due) {
  // Past a deadline (a fixed ttl ran out, this process was paused past a
  // renewal, max_hold was reached): lost, never renewed again. The holder may
  // have seen it first (Lease::lost() checks the deadlines too).
  const auto start = Clock::now();
  std::map<LockBackend*, std::vector<std::shared_ptr<LeaseState>>> to_renew;
  for (auto& l : due) {
    bool hold_limit = false;
    std::string cause = LeaseControl::deadline_cause(*l, start, hold_limit);
    if (cause.empty() && !LeaseControl::is_lost(*l)) {
      to_renew[LeaseControl::client(*l).backend.get()].push_back(l);
      continue;
    }
    {
      Shard& sh = shards_[l->wd_shard_];
      std::shared_ptr<LeaseState> keep;
      std::lock_guard g(sh.mutex);
      if (l->wd_linked_) {
        if (!hold_limit && !l->wd_renew_error_.empty())
          cause = "the watchdog could not renew it before it ran out: " + l->wd_renew_error_;
        unlink(sh, *l);
        keep = std::move(l->wd_keep_);  // `l` still holds it
      }
    }
    LeaseControl::mark_lost_later(l, cause, hold_limit);
  }
  // Watchdog leases: one renew_batch per backend.
  for (auto& [backend, leases] : to_renew) {
    // One item per key; a multi-key lease is owned only if all its keys are.
    std::vector<RenewItem> items;
    items.reserve(leases.size());
    for (auto& l : leases) {
      items.push_back(RenewItem{l->key(), l->owner_token(), l->lease_time(), l->type()});
      for (const auto& [key, fence] : l->more_)
        items.push_back(RenewItem{key, l->owner_token(), l->lease_time(), l->type()});
    }
    const auto sent = Clock::now();
    std::vector<RenewResult> results;
    std::string error;
    try {
      results = backend->renew_batch(items);
      if (results.size() != items.size()) error = "backend answered the wrong number of renewals";
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "unknown error";
    }
    const auto now = Clock::now();
    std::vector<std::pair<std::shared_ptr<LeaseState>, std::string>> lost;
    std::size_t item = 0;
    for (std::size_t i = 0; i < leases.size(); ++i) {
      LeaseState& l = *leases[i];
      Shard& sh = shards_[l.wd_shard_];
      std::unique_lock g(sh.mutex);
      // Gone from the watch list: released (or lost) meanwhile.
      auto erase = [&] {
        if (!l.wd_linked_) return;
        unlink(sh, l);
        l.wd_keep_.reset();  // leases[i] still holds it
      };
      const auto interval = LeaseControl::client(l).renew_interval();
      bool owned = true;
      for (std::size_t k = 0, n = 1 + l.more_.size(); k < n; ++k, ++item)
        owned = owned && error.empty() && results[item] == RenewResult::owned;
      if (owned && LeaseControl::is_lost(l)) {  // the holder saw a deadline pass meanwhile
        erase();
        lost.emplace_back(leases[i], "");
      } else if (owned) {
        LeaseControl::set_expires_at(l, sent + l.lease_time());
        if (l.wd_linked_) {
          l.wd_due_ = std::min(sent + interval, LeaseControl::hold_deadline(l));
          l.wd_renew_error_.clear();
        }
      } else if (error.empty()) {
        erase();
        lost.emplace_back(leases[i], "the watchdog found it expired or taken by another owner");
      } else if (now >= l.expires_at()) {
        erase();
        lost.emplace_back(leases[i], "the watchdog could not renew it before it ran out: " + error);
      } else if (l.wd_linked_) {
        // Retry soon; the last try a little before the lease runs out (once
        // it has, the lease counts as lost) and none past max_hold.
        auto retry = std::max(std::chrono::milliseconds(10), interval / 4);
        l.wd_due_ = std::max(now, std::min({now + retry, l.expires_at() - retry / 4,
                                            LeaseControl::hold_deadline(l)}));
        l.wd_renew_error_ = error;
      }
    }
    for (auto& [l, cause] : lost) LeaseControl::mark_lost_later(l, cause);
  }
}

}  // namespace weave::detail
