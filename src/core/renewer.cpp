// The renewer and the lost-lease notifier (core/renewer.h).
#include "core/renewer.h"

#include <algorithm>
#include <map>
#include <new>
#include <string>

#include "core/events.h"

namespace WEAVE_NAMESPACE::detail {

void Renewer::forget_in_child() {
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
  new std::deque<KeptLease>(std::move(queue_));
  queue_.clear();
}

void LostNotifier::post(KeptLease lease) {
  {
    Guard g(mutex_);
    if (stop_) return;
    queue_.push_back(std::move(lease));
    start_locked();
  }
  cv_.notify_one();
}

void LostNotifier::run() {
  Guard g(mutex_);
  for (;;) {
    mutex_.wait(cv_, [&]() WEAVE_REQUIRES(mutex_) { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing pending
    KeptLease kept = std::move(queue_.front());
    queue_.pop_front();
    g.unlock();
    kept.lease->report_lost_once();  // may release leases, may be slow
    kept = {};
    g.lock();
  }
}

void Renewer::link(Shard& sh, LeaseCore& l) {
  l.wd_prev_ = nullptr;
  l.wd_next_ = sh.head;
  if (sh.head) sh.head->wd_prev_ = &l;
  sh.head = &l;
  l.wd_linked_ = true;
  ++sh.count;
}

void Renewer::unlink(Shard& sh, LeaseCore& l) {
  if (l.wd_prev_)
    l.wd_prev_->wd_next_ = l.wd_next_;
  else
    sh.head = l.wd_next_;
  if (l.wd_next_) l.wd_next_->wd_prev_ = l.wd_prev_;
  l.wd_prev_ = l.wd_next_ = nullptr;
  l.wd_linked_ = false;
  --sh.count;
}

void Renewer::watch(LeaseCore& lease, std::shared_ptr<LeaseCore> keep, bool fresh) {
  if (fresh) {
    lease.wd_asked_.store(true, std::memory_order_relaxed);  // published with the lease
  } else if (lease.wd_asked_.exchange(true)) {
    return;
  }
  const Clock::time_point due = lease.renewed()
                                    ? std::min(lease.first_renewal(), lease.terms_.hold_deadline)
                                    : lease.expires_at();
  const Clock::rep at = due.time_since_epoch().count();
  Shard& sh = shards_[lease.wd_shard_];
  {
    Guard g(sh.mutex);
    // Dekker with drop_hold(): it marks the lease released, then reads
    // wd_asked_ (unwatch); here wd_asked_ was set, then the release is read
    // (all four seq_cst, or a bare entry could stay linked for a lease about
    // to be freed).
    if (!fresh && lease.released()) return;
    lease.wd_due_ = due;
    lease.wd_keep_ = std::move(keep);
    link(sh, lease);
    if (at < sh.earliest.load(std::memory_order_relaxed)) sh.earliest.store(at);  // seq_cst: see run()
  }
  // Wake the thread only when this entry is due before it wakes anyway
  // (never while it is awake: it looks at every shard before it sleeps).
  if (at < wake_at_.load()) {
    {
      Guard g(mutex_);
      if (stop_) return;  // at exit: nothing is renewed any more
      start_locked();
    }
    cv_.notify_one();
  }
}

void Renewer::unwatch(LeaseCore& lease, bool released) {
  if (!lease.wd_asked_.load()) return;  // never watched (seq_cst: see watch())
  Shard& sh = shards_[lease.wd_shard_];
  std::shared_ptr<LeaseCore> keep;
  {
    Guard g(sh.mutex);
    // Released for good: no watch() links it again (it reads the release
    // under this lock), so the destructor need not come here a second time.
    if (released) lease.wd_asked_.store(false, std::memory_order_relaxed);
    if (!lease.wd_linked_) return;
    unlink(sh, lease);
    keep = std::move(lease.wd_keep_);
  }
}

KeptLease Renewer::entry_of(LeaseCore& lease) {
  if (!lease.wd_asked_.load()) return {};
  Shard& sh = shards_[lease.wd_shard_];
  Guard g(sh.mutex);
  return lease.wd_linked_ ? KeptLease(lease.wd_keep_) : KeptLease();
}

std::size_t Renewer::size() {
  std::size_t n = 0;
  for (Shard& sh : shards_) {
    Guard g(sh.mutex);
    n += sh.count;
  }
  return n;
}

void Renewer::run() {
  constexpr Clock::rep kNever = Clock::time_point::max().time_since_epoch().count();
  constexpr Clock::rep kAwake = Clock::time_point::min().time_since_epoch().count();
  Guard lk(mutex_);
  std::vector<KeptLease> due;
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
      Guard g(sh.mutex);
      for (LeaseCore* l = sh.head; l; l = l->wd_next_)
        if (l->wd_due_ <= now && l->renewed()) coalesce_.insert(l->terms_.group.get());
    }
    for (Shard& sh : shards_) {
      Guard g(sh.mutex);
      Clock::time_point earliest = Clock::time_point::max();
      for (LeaseCore* l = sh.head, *after; l; l = after) {
        after = l->wd_next_;
        bool take = l->wd_due_ <= now;
        if (take && !l->wd_keep_) {
          // A bare entry (a fixed-ttl lease) ran out while held: its holder
          // keeps it alive until its release, which unlinks it under this lock.
          bool hold_limit = false, marked = false;
          losses_.push_back(l->mark_lost(l->deadline_cause(now, hold_limit), false, hold_limit, marked));
          unlink(sh, *l);
          continue;
        }
        if (!take && l->renewed() && l->wd_due_ != Clock::time_point::max() &&
            l->wd_due_ != l->terms_.hold_deadline) {  // not renewed early: it stops there
          take = l->wd_due_ - now <= l->terms_.renew_every / 2 && coalesce_.count(l->terms_.group.get()) != 0;
        }
        if (take) {
          due.emplace_back(l->wd_keep_);  // (linked: a lent group lives)
          l->wd_due_ = Clock::time_point::max();  // until processed and rescheduled
        } else {
          earliest = std::min(earliest, l->wd_due_);
        }
      }
      sh.earliest.store(earliest.time_since_epoch().count());
      next = std::min(next, earliest);
    }
    for (LeaseCore::LossSignal& loss : losses_) loss.fire();  // outside the shard locks (callbacks may release)
    losses_.clear();
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
        mutex_.wait(cv_);
      else
        mutex_.wait_until(cv_, next);
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

void Renewer::process(std::vector<KeptLease>& due) {
  // Past a deadline (a fixed ttl ran out, this process was paused past a
  // renewal, the hold deadline was reached): lost, never renewed again. The
  // holder may have seen it first (lost() checks the deadlines too).
  const auto start = Clock::now();
  std::map<const RenewGroup*, std::vector<std::shared_ptr<LeaseCore>>> to_renew;
  for (KeptLease& kept : due) {  // (each keeps its lent group until process() returns)
    const std::shared_ptr<LeaseCore>& l = kept.lease;
    bool hold_limit = false;
    std::string cause = l->deadline_cause(start, hold_limit);
    if (cause.empty() && !l->is_lost()) {
      to_renew[l->terms_.group.get()].push_back(l);
      continue;
    }
    {
      Shard& sh = shards_[l->wd_shard_];
      std::shared_ptr<LeaseCore> keep;
      Guard g(sh.mutex);
      if (l->wd_linked_) {
        unlink(sh, *l);
        keep = std::move(l->wd_keep_);  // `l` still holds it
      }
    }
    LeaseCore::mark_lost_later(l, cause, hold_limit);
  }
  for (auto& [group, leases] : to_renew) renew_group(*group, leases);
}

void Renewer::renew_group(const RenewGroup& group, std::vector<std::shared_ptr<LeaseCore>>& leases) {
  std::vector<LeaseCore*> batch;
  batch.reserve(leases.size());
  for (auto& l : leases) batch.push_back(l.get());
  const auto sent = Clock::now();
  std::vector<bool> owned;
  std::string error;
  try {
    group.renew(batch, owned);
    if (owned.size() != batch.size()) error = "the store answered the wrong number of renewals";
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown error";
  }
  const auto now = Clock::now();
  std::vector<std::pair<std::shared_ptr<LeaseCore>, std::string>> lost;
  std::vector<std::pair<std::string, Clock::time_point>> failing;  // first failed renewal: key, deadline
  for (std::size_t i = 0; i < leases.size(); ++i) {
    LeaseCore& l = *leases[i];
    Shard& sh = shards_[l.wd_shard_];
    Guard g(sh.mutex);
    // Gone from the watch list: released (or lost) meanwhile.
    auto erase = [&]() WEAVE_REQUIRES(sh.mutex) {
      if (!l.wd_linked_) return;
      unlink(sh, l);
      l.wd_keep_.reset();  // leases[i] still holds it
    };
    const bool kept = error.empty() && owned[i];
    if (kept && l.is_lost()) {  // the holder saw a deadline pass meanwhile
      erase();
      lost.emplace_back(leases[i], "");
    } else if (kept) {
      l.set_expires_at(l.deadline_after(sent));
      if (l.wd_linked_) {
        l.wd_due_ = std::min(sent + l.terms_.renew_every, l.terms_.hold_deadline);
        if (!l.wd_renew_error_.empty()) {  // (the lease's copy: only after a failure)
          l.wd_renew_error_.clear();
          Guard lg(l.mutex_);
          if (l.loss_) l.loss_->renew_error.clear();
        }
      }
    } else if (error.empty()) {
      erase();
      lost.emplace_back(leases[i], l.gone_cause());
    } else if (now >= l.expires_at()) {
      erase();
      lost.emplace_back(leases[i], LeaseCore::renewal_failed_cause(error));
    } else if (l.wd_linked_) {
      // Retry soon; the last try a little before the lease runs out (once
      // it has, the lease counts as lost) and none past the hold deadline.
      auto retry = std::max(std::chrono::milliseconds(10), std::chrono::milliseconds(l.terms_.renew_every / 4));
      l.wd_due_ = std::max(now, std::min({now + retry, l.expires_at() - retry / 4, l.terms_.hold_deadline}));
      if (l.wd_renew_error_.empty()) failing.emplace_back(l.terms_.key, l.expires_at());
      l.wd_renew_error_ = error;
      Guard lg(l.mutex_);
      l.loss_locked().renew_error = error;
    }
  }
  for (auto& [l, cause] : lost) LeaseCore::mark_lost_later(l, cause);
  // Once per lease and outage: retries until the deadline say nothing more.
  for (const auto& [key, deadline] : failing) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    emit_notice(group.event_hook(), EventKind::renewal_failed, group.feature(), key,
                "its renewal failed (" + error + "); retried until it runs out in " + std::to_string(left) + " ms");
  }
}

}  // namespace weave::detail
