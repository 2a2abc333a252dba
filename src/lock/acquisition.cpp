// A lock request: its checks, its steps (acquisition.h: one key's attempts,
// all-or-nothing over several keys, the lease it ends with) and the blocking
// driver that runs them on the calling thread, waiting behind one local
// leader per key (LocalGate). One file, so that [[gnu::flatten]] inlines the
// steps into the driver; src/lock/asio/async_lock.cpp drives the same steps
// from a coroutine.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/recycled.h"
#include "core/renewer.h"
#include "core/unique_token.h"
#include "acquisition.h"
#include "internal.h"
#include "weave/duration.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {

using detail::Clock;
using detail::LeaseControl;
using std::chrono::milliseconds;

namespace {

milliseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

void validate_key(std::string_view key) {
  if (key.empty()) throw UsageError("lock key is empty");
}

// Waits longer than weave::max_duration count as forever; longer ttls are
// refused (clock arithmetic on steady_clock nanoseconds would overflow).
void validate(std::string_view key, const LockSpec& spec) {
  validate_key(key);
  if (spec.ttl < milliseconds(0)) throw UsageError("lock ttl is negative");
  if (spec.ttl > max_duration)
    throw UsageError("lock '" + std::string(key) +
                     "': ttl=forever (or over 10 years) is not supported; omit ttl for a lease the watchdog renews");
  if (spec.wait < milliseconds(0)) throw UsageError("lock wait is negative");
  if (spec.release == LockSpec::Release::on_expiry && spec.ttl == milliseconds(0))
    throw UsageError("lock '" + std::string(key) +
                     "': release=on_expiry needs a ttl (a renewed lease would never run out)");
  if (spec.max_hold < milliseconds(0)) throw UsageError("lock '" + std::string(key) + "': max_hold is negative");
  if (spec.max_hold > milliseconds(0) && spec.ttl > milliseconds(0))
    throw UsageError("lock '" + std::string(key) +
                     "': max_hold limits the watchdog's renewals; a fixed ttl is never renewed (use one or the other)");
}

}  // namespace

bool detail::spec_is_valid(const LockSpec& spec) noexcept {
  try {
    validate("key", spec);
    return true;
  } catch (...) {
    return false;
  }
}

void detail::throw_busy(const LockSpec& spec, const std::string& key, milliseconds waited) {
  if (spec.release == LockSpec::Release::on_expiry) throw DuplicateCall(key, waited);
  throw LockBusy(key, waited);
}

namespace {

bool exclusive(LockType t) { return t != LockType::read; }

// One local leader per (backend, key): of the callers of this process waiting
// for the same exclusive key, only the leader talks to the backend (prepares
// its wait, tries, waits for a release); the others sleep on a local condition
// variable. When the leader acquires or gives up it hands leadership on, and
// the next leader prepares its own wait before its first try, so no release
// is missed. A release therefore costs one acquire attempt per process, not
// one per waiter. Fair locks do not use it (every waiter must keep its own
// place in the backend's line), nor do readers (they may all get in at once).
class LocalGate {
 public:
  LocalGate(const LockBackend* backend, std::string_view key) : gate_(backend, key) {}
  ~LocalGate() { resign(); }
  LocalGate(const LocalGate&) = delete;
  LocalGate& operator=(const LocalGate&) = delete;

  // Becomes the leader, or returns false at `deadline`.
  bool lead(Clock::time_point deadline) {
    if (leading_) return true;
    detail::Guard lk(gate_->mutex);
    auto free = [&]() WEAVE_REQUIRES(gate_->mutex) { return !gate_->leader; };
    bool got = deadline == Clock::time_point::max() ? (gate_->mutex.wait(gate_->cv, free), true)
                                                    : gate_->mutex.wait_until(gate_->cv, deadline, free);
    if (!got) {
      lk.unlock();
      gate_->cv.notify_one();  // a hand-over may have come with our timeout: pass it on
      return false;
    }
    gate_->leader = leading_ = true;
    return true;
  }
  void resign() {
    if (!leading_) return;
    {
      detail::Guard g(gate_->mutex);
      gate_->leader = leading_ = false;
    }
    gate_->cv.notify_one();
  }

 private:
  struct Gate {
    detail::Mutex mutex;
    std::condition_variable cv;
    bool leader WEAVE_GUARDED_BY(mutex) = false;
  };
  detail::GateRef<Gate> gate_;
  bool leading_ = false;
};

}  // namespace

namespace detail {

milliseconds handoff_turn(const ClientShared& shared, LockType type) noexcept {
  return type == LockType::reentrant ? shared.options.handoff_turn : milliseconds(0);
}

KeyAttempt::KeyAttempt(const ClientShared& shared, std::string_view key, std::string_view owner, LockType type,
                       milliseconds lease_time, bool waits, Clock::time_point deadline, Clock::time_point call_start,
                       Clock::time_point first_attempt)
    : shared_(shared),
      backend_(*shared.backend),
      key_(key),
      owner_(owner),
      type_(type),
      lease_time_(lease_time),
      waits_(waits),
      deadline_(deadline),
      call_start_(call_start),
      first_attempt_(first_attempt) {
  // fair / write waiters hold a place in the backend's line, refreshed while waiting.
  if (waits && (type == LockType::fair || type == LockType::write))
    queue_entry_ = std::max(shared.options.queue_entry, milliseconds(30));
  in_line_ = queue_entry_ > milliseconds(0);
  // reentrant: a caller that has waited starvation_after is starving (it
  // joins the key's line when refused; LockOptions::starvation_after).
  turn_ = handoff_turn(shared, type);
  may_starve_ = turn_ > milliseconds(0) && waits && shared.options.starvation_after != forever;
}

void KeyAttempt::leave_line() noexcept {
  if (!in_line_) return;
  in_line_ = false;
  try {
    backend_.leave_queue({key_, owner_, type_});
  } catch (...) {
    // The entry runs out on its own.
  }
}

KeyAttempt::Tried KeyAttempt::try_once() { return tried(shared_.acquire(request(/*prepare_wait=*/true), slot_hint_)); }

AcquireRequest KeyAttempt::request(bool prepare_wait) {
  waiter_.reset();
  wait_prepared_ = prepare_wait;
  if (waits_ && prepare_wait) waiter_ = backend_.prepare_wait(key_);
  sent_ = first_attempt_ != Clock::time_point{} ? std::exchange(first_attempt_, Clock::time_point{}) : Clock::now();
  starving_ = may_starve_ && sent_ - call_start_ >= shared_.options.starvation_after;
  if (starving_) in_line_ = true;  // it may have a place in line now
  return {key_, owner_, lease_time_, type_, queue_entry_, sent_, turn_, starving_};
}

KeyAttempt::Tried KeyAttempt::tried(const AcquireResult& r) {
  Tried t;
  if (r.acquired) {
    in_line_ = false;
    t.acquired = r;
    return t;
  }
  const auto now = Clock::now();
  if (waits_ && !wait_prepared_ && now < deadline_) {  // refused before a wait was prepared: again at once, preparing it
    t.again = true;
    return t;
  }
  if (!waiter_ || now >= deadline_) {
    t.give_up = true;
    return t;
  }
  // Wake on a release, when the holder's lease runs out, at our deadline,
  // or in time to refresh our place in line.
  Clock::time_point wake = deadline_;
  if (r.holder_ttl_left > milliseconds(0) && r.holder_ttl_left < deadline_ - now)
    wake = now + r.holder_ttl_left + milliseconds(1);
  // A starving waiter's place lasts the holder's lease + a turn: it comes
  // back half a turn before the lease ends (the holder may have renewed it).
  if (starving_ && r.holder_ttl_left > turn_) wake = std::min(wake, now + r.holder_ttl_left - turn_ / 2);
  if (queue_entry_ > milliseconds(0)) wake = std::min(wake, now + queue_entry_ / 3);
  // A caller about to starve tries again then, to take its place in line.
  if (may_starve_ && !starving_) wake = std::min(wake, call_start_ + shared_.options.starvation_after);
  t.wake = wake;
  return t;
}

std::optional<Clock::time_point> KeyAttempt::after_release(Clock::time_point last_wake) const {
  // A release that designated another starving waiter lets only it in: keep
  // waiting, but not past its turn (it may have died or stopped).
  const std::string_view next = waiter_->designated();
  if (turn_ == milliseconds(0) || next.empty() || next == owner_) return std::nullopt;
  return std::min(last_wake, Clock::now() + turn_ + milliseconds(1));
}

}  // namespace detail

namespace {

// One key, until acquired or its deadline, waiting on this thread (with a
// local leader among exclusive waiters).
std::optional<AcquireResult> take_key(detail::KeyAttempt& k) {
  std::optional<LocalGate> gate;
  if (k.gated()) gate.emplace(&k.backend(), k.key());
  for (;;) {
    if (gate && !gate->lead(k.deadline())) return std::nullopt;  // timed out behind another local waiter
    detail::KeyAttempt::Tried t = k.try_once();
    if (t.acquired) return t.acquired;  // the gate hands leadership on as it goes
    if (t.give_up) return std::nullopt;
    Clock::time_point wake = t.wake;
    while (k.waiter()->wait_until(wake)) {
      const std::optional<Clock::time_point> more = k.after_release(t.wake);
      if (!more) break;
      wake = *more;
    }
  }
}

}  // namespace

// Flattened: the request's steps inline into one function, as when they were one.
[[gnu::flatten]] LeaseHandle LockClient::try_acquire_counted(std::span<const std::string_view> keys, const LockSpec& spec,
                                            bool spec_checked, milliseconds* waited, std::string* busy_key,
                                            detail::LockSeries& series,
                                            const std::shared_ptr<const detail::ContextLink>& context,
                                            bool lend_client) {
  detail::Acquisition a(shared_, keys, spec, spec_checked, waited, busy_key, series, lend_client);
  if (LeaseHandle h = a.begin(context)) return h;
  if (a.single_try()) {  // one key, not waiting: one attempt, no waiter, no gate
    detail::MemSlotHint hint;
    AcquireResult r;
    try {
      r = a.try_single(hint);
    } catch (...) {
      a.failed(0);
      throw;
    }
    if (!r.acquired) return a.busy(0);
    a.took(0, r, a.started(), hint);
    return a.finish();
  }
  // All or nothing, in sorted order; one wait budget for all keys.
  for (std::size_t i = 0; i < a.missing().size(); ++i) {
    std::optional<AcquireResult> r;
    detail::KeyAttempt k = a.attempt(i);
    try {
      r = take_key(k);
    } catch (...) {
      a.failed(i);
      throw;
    }
    if (!r) return a.busy(i);
    a.took(i, *r, k);
    if (i + 1 == a.missing().size()) {
      const std::span<const RenewItem> stale = a.stale();
      if (stale.empty()) break;
      std::vector<RenewResult> renewed;
      try {
        renewed = shared_->backend->renew_batch(stale);
      } catch (...) {
        a.start_over();
        throw;
      }
      if (a.refreshed(renewed)) break;
      if (!a.start_over()) return a.lost_busy();
      i = static_cast<std::size_t>(-1);  // from the first key again
    }
  }
  return a.finish();
}

namespace detail {

Acquisition::Acquisition(const std::shared_ptr<const ClientShared>& shared, std::span<const std::string_view> keys_in,
                         const LockSpec& spec, bool spec_checked, milliseconds* waited, std::string* busy_key,
                         LockSeries& series, bool lend_client)
    : shared_(shared),
      spec_(spec),
      spec_checked_(spec_checked),
      lend_client_(lend_client),
      waited_(waited),
      busy_key_(busy_key),
      series_(series) {
  // A mem:// lease of a second or more that does not wait starts at the
  // coarse clock: up to a tick early, so it ends up to a tick early, for its
  // holder and for everyone else alike (the table keeps the same deadline).
  lease_time_ = spec.ttl == milliseconds(0) ? shared->options.watchdog_lease : spec.ttl;
  start_ = shared->in_process && spec.wait == milliseconds(0) && lease_time_ >= std::chrono::seconds(1)
               ? coarse_now()
               : Clock::now();
  if (waited) *waited = milliseconds(0);
  keys_ = keys_in;
}

// Counted once per request, however it ends, in the client's LockStats and
// the template's series; errors unless set.
Acquisition::~Acquisition() {
  shared_->stats.add(outcome_);
  series_.counts.add(outcome_);
  const auto stop = end_ != Clock::time_point{} ? end_ : Clock::now();
  series_.wait.observe(stop - start_);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(stop - start_).count();
  if (us != 0) shared_->stats.add(&LockCounts::acquiring_us, static_cast<std::int64_t>(us));  // (most are under 1 us)
}

LeaseHandle Acquisition::begin(const std::shared_ptr<const ContextLink>& context) {
  if (shared_->pid != current_pid())
    throw UsageError("this LockClient was made in process " + std::to_string(shared_->pid) +
                     " before fork(): make a new LockClient in this process (default_lock_client() renews itself)");
  if (keys_.empty()) throw UsageError("lock: no key given");
  for (std::string_view k : keys_) {
    if (spec_checked_)
      validate_key(k);
    else
      validate(k, spec_);
  }
  // Sorted and unique: every caller takes overlapping sets in the same order.
  // (No allocation for the common single key.)
  if (keys_.size() > 1) {
    sorted_.assign(keys_.begin(), keys_.end());
    std::sort(sorted_.begin(), sorted_.end());
    sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
    keys_ = sorted_;
  }
  missing_ = keys_;
  const LockType type = spec_.type;
  // Reentrancy: keys the running call's context already holds here are not
  // taken again. An exclusive hold serves every request; a read hold serves
  // reads only.
  if (const auto& head = context) {
    std::shared_ptr<Lease> reuse;  // the innermost context lease holding the first held key
    for (std::string_view key : keys_) {
      bool held = false;
      for (const auto* link = &head; *link; link = &(*link)->parent) {
        const ContextLink* n = link->get();
        if (n->kind != HeldKind::lock) continue;
        LeaseState& outer = state(*static_cast<Lease*>(n->held));
        if (!outer.holds(key) || outer.backend_ != shared_->backend.get()) continue;
        if (outer.released()) break;  // a stale chain: acquire afresh
        if (!exclusive(outer.type()) && exclusive(type))
          throw UsageError("lock '" + std::string(key) + "': this call holds it for read and asks for " +
                           std::string(to_string(type)) + " (upgrading a read lock is not supported)");
        if (!reuse) reuse = LeaseControl::lease_of(*link);
        held = true;
        break;
      }
      if (!held) not_held_.push_back(key);
    }
    if (reuse) {
      if (not_held_.empty() && LeaseControl::add_hold(state(*reuse))) {
        outcome_ = &LockCounts::reentered;
        return LeaseHandleAccess::make(std::move(reuse), true);
      }
      if (!not_held_.empty()) missing_ = not_held_;  // else released meanwhile: acquire afresh
    }
  }
  if (type != LockType::reentrant && !shared_->backend->supports(type)) {
    const std::string& url = shared_->options.url;
    throw UsageError("lock type '" + std::string(to_string(type)) + "' is not supported by backend " +
                     url.substr(0, url.find("://") + 3));
  }
  const bool forever_wait = spec_.wait == forever || spec_.wait > max_duration;  // no clock overflow
  deadline_ = forever_wait ? Clock::time_point::max() : start_ + spec_.wait;
  waits_ = spec_.wait > milliseconds(0);
  owner_ = unique_token_text();
  return {};
}

AcquireResult Acquisition::try_single(MemSlotHint& hint) {
  return shared_->acquire({missing_[0], owner_.view(), lease_time_, spec_.type, milliseconds(0), start_,
                          handoff_turn(*shared_, spec_.type), /*starving=*/false},
                         hint);
}

KeyAttempt Acquisition::attempt(std::size_t i) {
  return KeyAttempt(*shared_, missing_[i], owner_.view(), spec_.type, lease_time_, waits_, deadline_, start_,
                    i == 0 ? start_ : Clock::time_point{});
}

void Acquisition::took(std::size_t i, const AcquireResult& r, Clock::time_point sent, const MemSlotHint& hint) {
  if (i == 0) {
    first_sent_ = sent;
    first_slot_ = hint;
    first_fence_ = r.fencing_token;
  } else {
    more_.emplace_back(std::string(missing_[i]), r.fencing_token);
  }
  last_sent_ = sent;
  last_expires_ = r.validity > milliseconds(0) && r.validity < lease_time_ ? sent + r.validity  // the backend's shorter validity
                                                                            : Clock::time_point::max();
  expires_ = std::min(expires_, last_expires_);
}

std::span<const RenewItem> Acquisition::stale() {
  if (missing_.size() < 2 || last_sent_ - first_sent_ <= stale_after) return {};
  stale_.clear();
  for (std::size_t j = 0; j + 1 < missing_.size(); ++j)
    stale_.push_back({missing_[j], owner_.view(), lease_time_, spec_.type});
  return stale_;
}

bool Acquisition::refreshed(std::span<const RenewResult> results) {
  for (std::size_t j = 0; j < stale_.size(); ++j) {
    if (j >= results.size() || results[j] != RenewResult::owned) {
      lost_key_.assign(stale_[j].key);
      return false;
    }
  }
  // Every key's lease now runs from no earlier than the last one's taking;
  // the renewal gives no validity of its own, so only the last key's counts.
  first_sent_ = last_sent_;
  expires_ = last_expires_;
  return true;
}

bool Acquisition::start_over() {
  give_back_before(missing_.size());
  // A new owner for the new round: a release answers "released" to its own
  // owner's resend (release.lua's L:released_by), so an owner never takes a
  // key again after giving it back.
  owner_ = unique_token_text();
  more_.clear();
  expires_ = last_expires_ = Clock::time_point::max();
  return Clock::now() < deadline_;
}

LeaseHandle Acquisition::lost_busy() { return ends_busy(lost_key_); }

LeaseHandle Acquisition::ends_busy(std::string_view key) {
  if (busy_key_) busy_key_->assign(key);
  if (waited_) *waited_ = since(start_);
  outcome_ = &LockCounts::busy;
  return {};
}

void Acquisition::give_back_before(std::size_t i) noexcept {
  for (std::size_t j = 0; j < i; ++j) {
    try {
      shared_->backend->release({missing_[j], owner_.view(), spec_.type, {}, shared_->options.handoff_turn});
    } catch (...) {
      // Runs out with its lease.
    }
  }
}

LeaseHandle Acquisition::busy(std::size_t i) {
  give_back_before(i);
  return ends_busy(missing_[i]);
}

void Acquisition::failed(std::size_t i) noexcept {
  try {
    throw;
  } catch (Error& e) {
    name_key(e, missing_[i]);
  } catch (...) {
  }
  give_back_before(i);
}

LeaseHandle Acquisition::finish() {
  const bool watchdog = spec_.ttl == milliseconds(0);
  // The lease's one allocation, from this thread's recycled blocks.
  auto lease = std::allocate_shared<LeaseState>(Recycled<LeaseState>{}, [&](LeaseCore::Terms& terms) {
    terms.key.assign(missing_[0]);
    terms.owner.assign(owner_.view());
    terms.lease_time = lease_time_;
    terms.acquired_at = first_sent_;  // conservative: the backend's lease started later
    if (lend_client_) {  // an aliasing pointer without a count: the caller keeps the client
      terms.group = std::shared_ptr<const RenewGroup>(std::shared_ptr<const void>(), shared_.get());
      terms.group_lent = true;
    } else {
      terms.group = shared_;
    }
    if (watchdog) {
      terms.renew_every = shared_->renew_interval();
      // Longer than the longest duration (weave::forever included): no limit.
      if (spec_.max_hold > milliseconds(0) && spec_.max_hold <= max_duration)
        terms.hold_deadline = first_sent_ + spec_.max_hold;
    }
  });
  LeaseState& init = *lease;
  init.fence_ = first_fence_;
  init.slot_hint_ = first_slot_;
  init.backend_ = shared_->backend.get();
  init.more_ = std::move(more_);
  init.type_ = spec_.type;
  init.on_expiry_ = spec_.release == LockSpec::Release::on_expiry;
  init.series_ = &series_;
  if (init.terms().hold_deadline != Clock::time_point::max()) init.max_hold_ = spec_.max_hold;
  init.start_deadline(first_sent_, shared_->in_process);
  if (expires_ != Clock::time_point::max()) init.set_expires_at(expires_);  // the backend's shorter validity
  // (A fixed-ttl lease nobody asked to hear about is not watched: the
  // process handler hears of its loss when the release finds it.)
  if (watchdog || shared_->options.on_lost || shared_->options.on_event)
    Renewer::instance().watch(*lease, lease, /*fresh=*/true);
  // A mem:// key taken at the first attempt cost one in-process call, well
  // under the microsecond LockStats counts in: its end needs no clock read.
  end_ = shared_->in_process && missing_.size() == 1 && first_sent_ == start_ ? start_ : Clock::now();
  if (waited_) *waited_ = std::chrono::duration_cast<milliseconds>(end_ - start_);
  outcome_ = &LockCounts::acquired;
  return LeaseHandleAccess::make(std::move(lease), false);
}

}  // namespace detail

}  // namespace weave
