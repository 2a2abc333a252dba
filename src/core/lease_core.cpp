// LeaseCore's state changes, and weave::HeldLease's accessors, which read it.
#include "core/lease_core.h"

#include <thread>
#include <utility>

#include "core/events.h"
#include "core/renewer.h"
#include "weave/error.h"
#include "weave/held_lease.h"

namespace WEAVE_NAMESPACE {
namespace detail {

LeaseCore::LeaseCore() noexcept : wd_shard_(Renewer::shard_of_this_thread()) {}

// Renewer::unwatch() once the renewer was asked to watch (wd_asked_, read
// first: most leases never are, and then neither the renewer nor the pid is
// looked up).
LeaseCore::~LeaseCore() {
  if (wd_asked_.load() && pid_ == current_pid()) Renewer::instance().unwatch(*this);
}

LeaseCore::Hold LeaseCore::add_hold() noexcept {
  // A lent group not kept yet is pinned while this hold takes its own
  // reference to it (once kept, it outlives every hold).
  const std::uint32_t pin = terms_.group_lent && !group_kept_.load(std::memory_order_acquire) ? kPin : 0;
  std::uint32_t s = state_.load(std::memory_order_acquire);
  for (;;) {
    if ((s & kHolds) == 0) return Hold::released;
    if (s & kLost) return Hold::lost;
    if (pin && (s & kPins) >= kPins - kPin) {  // the pins are full but mark_lost()'s one: wait for room
      std::this_thread::yield();
      s = state_.load(std::memory_order_acquire);
      continue;
    }
    if (state_.compare_exchange_weak(s, s + 1 + pin, std::memory_order_acq_rel)) break;
  }
  if (pin) {
    {
      Guard g(mutex_);
      if (!group_keep_) group_keep_ = terms_.group->owning_ref();  // this hold may outlast the lender's
    }
    group_kept_.store(true, std::memory_order_release);
    unpin();
  }
  return Hold::added;
}

bool LeaseCore::drop_hold() noexcept {
  std::uint32_t s = state_.load(std::memory_order_acquire);
  do {
    if ((s & kHolds) == 0) return false;  // released already
  } while (!state_.compare_exchange_weak(s, s - 1));  // seq_cst: see Renewer::watch()
  // The lender's call ends soon after, and its group may go with it: not
  // while another thread reads it (a pinned hold or loss). (A fork()ed
  // child's copy may keep a pin of a thread it does not have, and the
  // parent's group is never freed there.)
  if (terms_.group_lent && (s & kPins) != 0 && pid_ == current_pid())
    while ((state_.load(std::memory_order_acquire) & kPins) != 0) std::this_thread::yield();
  if ((s & kHolds) != 1) return false;
  // (seq_cst, as in unwatch(); a fork()ed child's copy is the parent's)
  if (wd_asked_.load() && pid_ == current_pid()) Renewer::instance().unwatch(*this, /*released=*/true);
  return true;
}

void LeaseCore::unpin() noexcept { state_.fetch_sub(kPin, std::memory_order_release); }

void LeaseCore::settle() noexcept {
  settling_.store(true);
  if (pid_ == current_pid()) Renewer::instance().unwatch(*this);
}

LeaseCore::LossSignal LeaseCore::take_loss_signal_locked() {
  LossSignal signal;
  if (!loss_) return signal;  // nothing made: no token, no listener
  signal.stop = loss_->stop;  // none yet: the first stop_token() makes it stopped
  signal.listener = std::exchange(loss_->listener, {});
  signal.more = std::exchange(loss_->more_listeners, {});
  return signal;
}

void LeaseCore::LossSignal::fire() noexcept {
  if (stop.stop_possible()) stop.request_stop();
  listener.fire();
  for (const LossListener& l : more) l.fire();
}

LeaseCore::LossSignal LeaseCore::mark_lost(const std::string& cause, bool even_if_released, bool hold_limit,
                                           bool& marked) {
  marked = false;
  LossSignal signal;
  // A lent group is pinned while the loss is counted (by a thread that may not hold the lease).
  const std::uint32_t pin = terms_.group_lent ? kPin : 0;
  {
    Guard g(mutex_);
    std::uint32_t s = state_.load(std::memory_order_acquire);
    do {
      if (s & kLost) return signal;
      if ((s & kHolds) == 0 && !even_if_released) return signal;
    } while (!state_.compare_exchange_weak(s, (s | kLost) + pin, std::memory_order_acq_rel));
    LossState& loss = loss_locked();
    loss.cause = cause;
    loss.hold_limit = hold_limit;
    signal = take_loss_signal_locked();
  }
  count_lost();
  if (pin) unpin();
  marked = true;
  return signal;
}

bool LeaseCore::record_lost(const std::string& cause, bool even_if_released, bool hold_limit) {
  bool marked = false;
  LossSignal signal = mark_lost(cause, even_if_released, hold_limit, marked);
  // The running method hears of it first: a slow report must not delay it.
  signal.fire();
  return marked;
}

std::string LeaseCore::ran_out_cause() const {
  if (!renewed())
    return "its fixed ttl of " + std::to_string(terms_.lease_time.count()) + " ms ran out while it was held";
  return "its lease of " + std::to_string(terms_.lease_time.count()) +
         " ms ran out before it was renewed (the process or its renewer thread was held up, or the store did "
         "not answer in time)";
}

std::string LeaseCore::renewal_failed_cause(const std::string& error) {
  return "the renewer could not renew it before it ran out: " + error;
}

std::string LeaseCore::gone_cause() const { return "a renewal found it expired or taken by another owner"; }

std::string LeaseCore::deadline_cause(Clock::time_point now, bool& hold_limit) const {
  const Clock::time_point expiry = expires_at();
  hold_limit = now >= terms_.hold_deadline && terms_.hold_deadline <= expiry;  // whichever came first
  if (hold_limit)
    return "it was held past its max_hold of " +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(terms_.hold_deadline - terms_.acquired_at).count()) +
           " ms: no longer renewed, it runs out by itself";
  if (now < expiry) return "";
  {
    Guard g(mutex_);
    if (loss_ && !loss_->renew_error.empty()) return renewal_failed_cause(loss_->renew_error);
  }
  return ran_out_cause();
}

void LeaseCore::fire_stop() noexcept {
  LossSignal signal;
  {
    Guard g(mutex_);
    signal = take_loss_signal_locked();
  }
  signal.fire();  // outside the mutex: callbacks may release leases
}

bool LeaseCore::check_deadlines_passed(Clock::time_point now, bool even_if_released) noexcept {
  if (is_lost()) {
    // Marked by another thread, which may not have fired the token yet: a
    // holder told "lost" finds every token it kept fired too.
    fire_stop();
    return true;
  }
  if (now < expires_at() && now < terms_.hold_deadline) return false;
  try {
    bool hold_limit = false;
    const std::string cause = deadline_cause(now, hold_limit);
    if (record_lost(cause, even_if_released, hold_limit) && !even_if_released && pid_ == current_pid()) {
      // While watched, its entry holds it; else the renewer took it out as
      // lost and reports it itself.
      if (KeptLease self = Renewer::instance().entry_of(*this); self.lease) LostNotifier::instance().post(std::move(self));
    }
  } catch (...) {
    // Out of memory, or no notifier thread: the renewer reports it when it comes round.
  }
  if (!is_lost()) return false;
  fire_stop();  // (marked by another thread meanwhile: its token may not have fired yet)
  return true;
}

void LeaseCore::mark_lost_later(const std::shared_ptr<LeaseCore>& l, const std::string& cause, bool hold_limit) {
  if (l->settling()) return;  // the holder's last call decides (settle())
  l->record_lost(cause, false, hold_limit);  // no-op when already lost (e.g. seen by the holder first)
  if (l->is_lost() && !l->lost_reported_.load()) LostNotifier::instance().post(KeptLease(l));
}

void LeaseCore::report_lost_once() noexcept {
  if (!is_lost() || lost_reported_.exchange(true)) return;
  report_lost();
}

bool LeaseCore::hold_limit() const {
  Guard g(mutex_);
  return loss_ && loss_->hold_limit;
}

std::string LeaseCore::cause() const {
  Guard g(mutex_);
  return loss_ ? loss_->cause : std::string();
}

void LeaseCore::report_to(const EventHook& hook, std::string_view feature, const HeldLease& view,
                          std::string_view consequence) const noexcept {
  try {
    const std::string why = cause();
    const LeaseLost error(terms_.key, why + ": " + std::string(consequence));
    emit_event(hook, Event{EventKind::lease_lost, feature, terms_.key, why, error, nullptr, &view});
  } catch (...) {
    // building the event failed (no memory): nothing to report with
  }
}

std::stop_token LeaseCore::stop_token() noexcept {
  check_deadlines(Clock::now());  // fires the token first when a deadline has passed
  std::stop_source stop(std::nostopstate);
  bool lost_already;
  {
    Guard g(mutex_);
    try {
      LossState& loss = loss_locked();
      if (!loss.stop.stop_possible()) loss.stop = std::stop_source();
      stop = loss.stop;
    } catch (...) {
      return {};  // out of memory: a token that never fires
    }
    lost_already = is_lost();
  }
  if (lost_already)
    stop.request_stop();  // lost before the token was made
  else
    watch_for_expiry();
  return stop.get_token();
}

void LeaseCore::watch_for_expiry() noexcept {
  if (wd_asked_.load(std::memory_order_acquire) || released()) return;
  // A fixed-ttl lease not watched yet: what hears of its loss must hear of its expiry.
  try {
    Renewer::instance().watch(*this, nullptr, /*fresh=*/false);
  } catch (...) {
    // No renewer thread: the holder's own lost() / stop_token() still see the deadline.
  }
}

void LeaseCore::listen_for_loss(LossListener l) noexcept {
  {
    Guard g(mutex_);
    if (!is_lost()) {
      try {
        LossState& loss = loss_locked();
        if (!loss.listener.lost)
          loss.listener = std::move(l);
        else
          loss.more_listeners.push_back(std::move(l));
      } catch (...) {
        return;  // out of memory: the holder's own lost() still sees the loss
      }
      l.lost = nullptr;
    }
  }
  if (l.lost)
    l.fire();  // lost before it listened
  else
    watch_for_expiry();
}

}  // namespace detail

// ---- HeldLease: a view of the LeaseCore behind it ----

// A const accessor may mark the lease lost: its deadline passed, and the
// holder asking must not hear otherwise.
const std::string& HeldLease::key() const noexcept { return core_->terms().key; }
const std::string& HeldLease::owner_token() const noexcept { return core_->terms().owner; }
std::stop_token HeldLease::stop_token() const noexcept { return core_->stop_token(); }
bool HeldLease::lost() const noexcept { return core_->check_deadlines(clock::now()); }
std::chrono::milliseconds HeldLease::lease_time() const noexcept { return core_->terms().lease_time; }
HeldLease::clock::time_point HeldLease::expires_at() const noexcept { return core_->expires_at(); }

std::string HeldLease::lost_cause() const {
  lost();
  return core_->cause();
}

std::chrono::milliseconds HeldLease::remaining() const noexcept {
  auto left = expires_at() - clock::now();
  if (left <= clock::duration::zero()) return std::chrono::milliseconds(0);
  return std::chrono::ceil<std::chrono::milliseconds>(left);  // 0 only once the deadline passed
}

}  // namespace weave
