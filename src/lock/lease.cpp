// What a lock lease adds to the core lease (renewal in batches per client,
// release in the backend, the lock's hooks), LeaseHandle, and the leases of
// the running call's context.
#include <charconv>
#include <cstdint>
#include <exception>
#include <utility>

#include "core/events.h"
#include "internal.h"
#include "mem_backend.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {
namespace detail {

const ContextLink* LeaseControl::own_link(LeaseState& l, std::shared_ptr<const ContextLink>& parent, bool fresh) {
  const bool first = fresh ? !l.link_taken_.load(std::memory_order_relaxed) : !l.link_taken_.exchange(true);
  if (!first) return nullptr;
  l.link_taken_.store(true, std::memory_order_relaxed);
  l.link_ = ContextLink{static_cast<Lease*>(&l), HeldKind::lock, std::move(parent)};
  return &l.link_;
}

std::shared_ptr<const ContextLink> LeaseControl::extra_link(const std::shared_ptr<Lease>& lease,
                                                            std::shared_ptr<const ContextLink> parent) {
  struct Held {
    ContextLink link;
    std::shared_ptr<Lease> keep;
  };
  auto held = std::make_shared<const Held>(Held{ContextLink{lease.get(), HeldKind::lock, std::move(parent)}, lease});
  return std::shared_ptr<const ContextLink>(held, &held->link);
}

std::shared_ptr<const ContextLink> LeaseControl::chain_link(const std::shared_ptr<Lease>& lease,
                                                            std::shared_ptr<const ContextLink> parent, bool fresh) {
  if (const ContextLink* own = own_link(state(*lease), parent, fresh))
    return std::shared_ptr<const ContextLink>(lease, own);  // shares the lease's ownership
  return extra_link(lease, std::move(parent));
}

std::shared_ptr<const ContextLink> LeaseControl::LentPush::lend(const std::shared_ptr<const ContextLink>& parent) {
  std::shared_ptr<const ContextLink> link_parent = parent;
  if (const ContextLink* own = own_link(state(*handle_.shared()), link_parent, !handle_.reentrant())) {
    lent_ = handle_.shared().get();
    return std::shared_ptr<const ContextLink>(LeaseHandleAccess::take(handle_), own);  // (C++20: moved, not copied)
  }
  return extra_link(handle_.shared(), std::move(link_parent));
}

LeaseControl::LentPush::~LentPush() {
  std::shared_ptr<const ContextLink> mine = push_.pop();
  if (!lent_) return;
  if (mine) {  // (every scope that changes the head restores it)
    LeaseHandleAccess::put_back(handle_, std::shared_ptr<Lease>(std::move(mine), lent_));
    return;
  }
  // Not at the head (a scope above it left its push in place): the link is
  // further down the chain; the handle gets a reference of its own.
  for (const std::shared_ptr<const ContextLink>* n = &here_; *n; n = &(*n)->parent)
    if (n->get() == &state(*lent_).link_) {
      LeaseHandleAccess::put_back(handle_, std::shared_ptr<Lease>(*n, lent_));
      return;
    }
}

void ClientShared::renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const {
  std::vector<RenewItem> items;
  items.reserve(leases.size());
  for (LeaseCore* core : leases) {
    const LeaseState& l = static_cast<const LeaseState&>(*core);
    items.push_back(RenewItem{l.terms().key, l.terms().owner, l.terms().lease_time, l.type_});
    for (const auto& [key, fence] : l.more_) items.push_back(RenewItem{key, l.terms().owner, l.terms().lease_time, l.type_});
  }
  const std::vector<RenewResult> results = backend->renew_batch(items);
  if (results.size() != items.size()) throw Error("the lock backend answered the wrong number of renewals");
  owned.clear();
  std::size_t item = 0;
  for (LeaseCore* core : leases) {
    const LeaseState& l = static_cast<const LeaseState&>(*core);
    bool all = true;
    for (std::size_t k = 0, n = 1 + l.more_.size(); k < n; ++k, ++item)
      all = all && results[item] == RenewResult::owned;
    owned.push_back(all);
    if (all) {
      stats.add(&Counters::renewals);
      l.series_->counts.add(&LockCounts::renewals);
    }
  }
}

void LeaseState::count_lost() noexcept {
  client().stats.add(&LockCounts::lost);
  series_->counts.add(&LockCounts::lost);
}

template <class F>
void LeaseControl::as_lost_error(const LeaseState& l, F&& f) {
  const std::string cause = l.cause();
  if (l.hold_limit())
    f(HoldLimitExceeded(l.terms().key, l.max_hold_, cause));
  else
    f(LeaseLost(l.terms().key, cause));
}

void LeaseState::report_lost() noexcept {
  const LockOptions& o = client().options;
  // Callbacks must not throw; there is nobody to hand their error to.
  if (o.on_lost) {
    try {
      o.on_lost(*this, lost_cause());
    } catch (...) {
    }
  }
  try {
    LeaseControl::as_lost_error(*this, [&](const LeaseLost& e) {
      const std::string cause = lost_cause();
      detail::emit_event(o.on_event, Event{EventKind::lease_lost, "lock", terms().key, cause, e, this, this});
    });
  } catch (...) {
  }
}

void LeaseControl::release_failed(const LeaseState& l, const std::string& key, const std::string& cause, bool may_throw) {
  const ClientShared& c = l.client();
  c.stats.add(&LockCounts::release_failures);
  l.series_->counts.add(&LockCounts::release_failures);
  ReleaseFailed error(key, cause);
  detail::emit_event(c.options.on_event, Event{EventKind::release_failed, "lock", key, cause, error, &l, &l});
  if (may_throw && c.options.release_failure_policy == ReleaseFailurePolicy::throw_error) throw error;
}

bool LeaseControl::add_hold(LeaseState& l) {
  l.check_deadlines(Clock::now());
  switch (l.add_hold()) {
    case LeaseCore::Hold::added: return true;
    case LeaseCore::Hold::released: return false;
    case LeaseCore::Hold::lost: break;
  }
  throw LeaseLost(l.terms().key, "the enclosing call's lease was lost (" + l.cause() + ")");
}

// Flattened: begin_drop() and end_drop() (steps for the asynchronous driver)
// inline here.
[[gnu::flatten]] void LeaseControl::drop_hold(const std::shared_ptr<Lease>& lp, bool may_throw) {
  Drop d = begin_drop(state(*lp));
  const ClientShared& c = state(*lp).client();
  // Every key, even after a failure (the others must not wait for their ttl).
  for (std::size_t i = 0; i < d.releases; ++i) {
    const ReleaseRequest r = d.request(i);
    try {
      d.released(c.release(r, i == 0 ? state(*lp).slot_hint_ : MemSlotHint{}));  // (the hint is the first key's)
    } catch (...) {
      d.failed(r.key);
    }
  }
  end_drop(state(*lp), d, may_throw);
}

ReleaseRequest LeaseControl::Drop::request(std::size_t i) const noexcept {
  const std::string& key = i == 0 ? lease->terms().key : lease->more_[i - 1].first;
  return {key, lease->terms().owner, lease->type_, now, lease->client().options.handoff_turn};
}

void LeaseControl::Drop::released(ReleaseResult r) noexcept { lost = lost || r == ReleaseResult::lost; }

void LeaseControl::Drop::failed(std::string_view key) noexcept {
  if (!failed_key.empty()) return;  // the first failure is the one reported
  failed_key = key;
  try {
    throw;
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown error";
  }
}

LeaseControl::Drop LeaseControl::begin_drop(LeaseState& l) {
  const ClientShared& c = l.client();
  Drop d;
  d.lease = &l;
  d.last = l.drop_hold();
  if (d.last && c.pid != current_pid()) {  // a fork()ed child's copy: the lease is the parent's
    d.childs_copy = true;
    return d;
  }
  if (!d.last) return d;
  c.stats.add(&LockCounts::released);
  // One clock reading for the deadline check, the hold time and the mem://
  // release. A lease a second or more before its deadlines is within them
  // by either clock: the coarse one does (it lags steady_clock by a tick,
  // ~4 ms). A store's release is a round trip: the exact clock costs nothing.
  Clock::time_point now = coarse_now();
  if (!c.in_process || now + std::chrono::seconds(1) >= std::min(l.expires_at(), l.terms().hold_deadline)) now = Clock::now();
  l.series_->hold.observe(now - l.terms().acquired_at);  // (its count is the series' releases)
  l.check_deadlines(now, true);                   // ran out (or past max_hold) before this release
  d.now = now;
  if (!l.on_expiry_) d.releases = 1 + l.more_.size();
  return d;
}

void LeaseControl::end_drop(LeaseState& l, const Drop& d, bool may_throw) {
  if (d.childs_copy) return;
  if (d.last) {
    if (d.lost) l.record_lost("it expired or was taken by another owner before release", true);
    // A lease already known lost owns nothing the failed call could free: the
    // loss is what the caller must hear (per policy), not the backend error.
    if (!d.failed_key.empty() && !l.is_lost()) return release_failed(l, d.failed_key, d.failure, may_throw);
  }
  if (d.last ? !l.is_lost() : !l.lost()) return;  // (the last hold checked the deadlines above)
  l.report_lost_once();  // unless the notifier did already
  if (may_throw && l.client().options.lost_policy == LeaseLostPolicy::throw_at_release)
    as_lost_error(l, [](const auto& e) { throw e; });  // its own type: HoldLimitExceeded or LeaseLost
}

}  // namespace detail

// ---- Lease: its accessors read the LeaseState it is ----

using detail::state;

LockType Lease::type() const noexcept { return state(*this).type_; }
std::uint64_t Lease::fencing_token() const noexcept { return state(*this).fence_; }
bool Lease::renewed() const noexcept { return state(*this).renewed(); }
std::chrono::milliseconds Lease::max_hold() const noexcept { return state(*this).max_hold_; }
Lease::clock::time_point Lease::acquired_at() const noexcept { return state(*this).terms().acquired_at; }

std::vector<std::string_view> Lease::keys() const {
  const detail::LeaseState& s = state(*this);
  std::vector<std::string_view> out{s.terms().key};
  for (const auto& [key, fence] : s.more_) out.push_back(key);
  return out;
}

bool Lease::holds(std::string_view key) const noexcept {
  const detail::LeaseState& s = state(*this);
  if (key == s.terms().key) return true;
  for (const auto& [k, fence] : s.more_)
    if (k == key) return true;
  return false;
}

std::uint64_t Lease::fencing_token(std::string_view key) const {
  const detail::LeaseState& s = state(*this);
  if (key == s.terms().key) return s.fence_;
  for (const auto& [k, fence] : s.more_)
    if (k == key) return fence;
  throw UsageError("lease on '" + s.terms().key + "' does not hold key '" + std::string(key) + "'");
}

// ---- the call context's leases ----

const Lease* current_lease() noexcept {
  const detail::ContextLink* n = detail::find_in_context(detail::HeldKind::lock, [](const HeldLease&) { return true; });
  return n ? static_cast<const Lease*>(n->held) : nullptr;
}

const Lease* current_lease(std::string_view key) noexcept {
  const detail::ContextLink* n = detail::find_in_context(
      detail::HeldKind::lock, [key](const HeldLease& h) { return static_cast<const Lease&>(h).holds(key); });
  return n ? static_cast<const Lease*>(n->held) : nullptr;
}

LeaseScope::LeaseScope(const LeaseHandle& handle) {
  if (!handle) throw UsageError("LeaseScope needs a handle that holds a lease");
  previous_ = detail::context_head();
  detail::set_context_head(detail::LeaseControl::chain_link(handle.shared(), previous_, /*fresh=*/false));
}

LeaseScope::~LeaseScope() { detail::set_context_head(std::move(previous_)); }

// ---- LeaseHandle ----

LeaseHandle::LeaseHandle(LeaseHandle&& other) noexcept
    : lease_(std::move(other.lease_)), reentrant_(other.reentrant_) {}

LeaseHandle& LeaseHandle::operator=(LeaseHandle&& other) noexcept {
  if (this != &other) {
    drop(false);
    lease_ = std::move(other.lease_);
    reentrant_ = other.reentrant_;
  }
  return *this;
}

const Lease& LeaseHandle::lease() const {
  if (!lease_) throw UsageError("this LeaseHandle holds no lease");
  return *lease_;
}

// Flattened: the release driver (drop_hold) inlines here.
[[gnu::flatten]] void LeaseHandle::release() { drop(true); }

void LeaseHandle::drop(bool may_throw) {
  if (!lease_) return;
  std::shared_ptr<Lease> l = std::move(lease_);
  lease_.reset();
  if (may_throw) {
    detail::LeaseControl::drop_hold(l, true);
  } else {
    try {
      detail::LeaseControl::drop_hold(l, false);
    } catch (...) {
    }
  }
}

}  // namespace weave
