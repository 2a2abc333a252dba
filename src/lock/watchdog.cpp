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

BackgroundThread::BackgroundThread() {
  guard_across_fork(mutex_, [this] {
    forget_thread(thread_);
    started_ = stop_ = false;
    new (&cv_) std::condition_variable();  // the parent's thread may have been waiting on it
    forget_in_child();
  });
}

void BackgroundThread::start_locked() {
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void BackgroundThread::stop() {
  {
    std::lock_guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// After the stop at exit nothing is renewed any more (the leases run out on their own).
Watchdog& Watchdog::instance() { return process_wide<Watchdog>(); }

void Watchdog::forget_in_child() {
  // The parent's leases are renewed by the parent: forgotten here, not freed
  // (freeing could run code that expects their threads).
  new std::unordered_map<const LeaseState*, Entry>(std::move(entries_));
  entries_.clear();
  coalesce_.clear();
  wake_at_ = Clock::time_point::max();
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

void Watchdog::watch(const std::shared_ptr<LeaseState>& lease) {
  const ClientShared& c = LeaseControl::client(*lease);
  const Clock::time_point due =
      lease->renewed() ? std::min(lease->acquired_at() + c.renew_interval(), LeaseControl::hold_deadline(*lease))
                       : lease->expires_at();
  bool wake;
  {
    std::lock_guard g(mutex_);
    if (stop_) return;
    entries_[lease.get()] = Entry{lease, due, {}};
    start_locked();
    wake = due < wake_at_;
  }
  if (wake) cv_.notify_one();
}

void Watchdog::unwatch(const LeaseState* lease) {
  std::lock_guard g(mutex_);
  entries_.erase(lease);
}

std::size_t Watchdog::size() {
  std::lock_guard g(mutex_);
  return entries_.size();
}

void Watchdog::run() {
  std::unique_lock lk(mutex_);
  std::vector<std::shared_ptr<LeaseState>> due;
  while (!stop_) {
    const auto now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    due.clear();
    // Backends with a watchdog lease due now: their leases due within half a
    // renew interval are renewed in the same batch, so leases acquired at
    // different times coalesce into ~one batch per period instead of one
    // round trip per due time. Fixed-ttl leases are never taken early (their
    // due time is their expiry).
    coalesce_.clear();
    for (auto& [_, e] : entries_)
      if (e.due <= now && e.lease->renewed())
        coalesce_.insert(LeaseControl::client(*e.lease).backend.get());
    for (auto& [_, e] : entries_) {
      bool take = e.due <= now;
      if (!take && e.lease->renewed() && e.due != Clock::time_point::max() &&
          e.due != LeaseControl::hold_deadline(*e.lease)) {  // not renewed early: it stops there
        const ClientShared& c = LeaseControl::client(*e.lease);
        take = e.due - now <= c.renew_interval() / 2 && coalesce_.count(c.backend.get()) != 0;
      }
      if (take) {
        due.push_back(e.lease);
        e.due = Clock::time_point::max();  // until processed and rescheduled
      } else {
        next = std::min(next, e.due);
      }
    }
    if (due.empty()) {
      wake_at_ = next;
      if (next == Clock::time_point::max())
        cv_.wait(lk);
      else
        cv_.wait_until(lk, next);
      wake_at_ = Clock::time_point::min();  // awake: no need to notify us
      continue;
    }
    wake_at_ = Clock::time_point::min();
    lk.unlock();
    process(due);
    due.clear();  // drop our references outside the lock
    lk.lock();
  }
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
      std::lock_guard g(mutex_);
      auto it = entries_.find(l.get());
      if (it != entries_.end()) {
        if (!hold_limit && !it->second.renew_error.empty())
          cause = "the watchdog could not renew it before it ran out: " + it->second.renew_error;
        entries_.erase(it);
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
    std::unique_lock g(mutex_);
    std::size_t item = 0;
    for (std::size_t i = 0; i < leases.size(); ++i) {
      LeaseState& l = *leases[i];
      const auto interval = LeaseControl::client(l).renew_interval();
      bool owned = true;
      for (std::size_t k = 0, n = 1 + l.more_.size(); k < n; ++k, ++item)
        owned = owned && error.empty() && results[item] == RenewResult::owned;
      if (owned && LeaseControl::is_lost(l)) {  // the holder saw a deadline pass meanwhile
        entries_.erase(&l);
        lost.emplace_back(leases[i], "");
      } else if (owned) {
        LeaseControl::set_expires_at(l, sent + l.lease_time());
        if (auto it = entries_.find(&l); it != entries_.end()) {
          it->second.due = std::min(sent + interval, LeaseControl::hold_deadline(l));
          it->second.renew_error.clear();
        }
      } else if (error.empty()) {
        entries_.erase(&l);
        lost.emplace_back(leases[i], "the watchdog found it expired or taken by another owner");
      } else if (now >= l.expires_at()) {
        entries_.erase(&l);
        lost.emplace_back(leases[i], "the watchdog could not renew it before it ran out: " + error);
      } else if (auto it = entries_.find(&l); it != entries_.end()) {
        // Retry soon; the last try a little before the lease runs out (once
        // it has, the lease counts as lost) and none past max_hold.
        auto retry = std::max(std::chrono::milliseconds(10), interval / 4);
        it->second.due = std::max(now, std::min({now + retry, l.expires_at() - retry / 4,
                                                 LeaseControl::hold_deadline(l)}));
        it->second.renew_error = error;
      }
    }
    g.unlock();
    for (auto& [l, cause] : lost) LeaseControl::mark_lost_later(l, cause);
  }
}

}  // namespace weave::detail
