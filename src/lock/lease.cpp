// Lease state changes, LeaseHandle, and the per-thread call chain.
#include <uuid/uuid.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <utility>

#include "internal.h"
#include "mem_backend.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {
namespace detail {

// "<uuid>:<counter>": one libuuid value per thread (made anew in a fork()ed
// child, which must not reuse its parent's) and a counter, so tokens are unique
// across threads, processes and hosts without a libuuid call per acquisition.
std::string new_owner_token() {
  struct Source {
    pid_t pid = 0;
    std::string prefix;
    std::uint64_t next = 0;
  };
  thread_local Source source;
  if (source.pid != current_pid()) {
    uuid_t id;
    uuid_generate_random(id);
    char text[37];
    uuid_unparse_lower(id, text);
    source = {current_pid(), std::string(text, 36) + ":", 0};
  }
  char number[16];
  const auto end = std::to_chars(number, number + sizeof number, source.next++, 16).ptr;
  std::string token;
  token.reserve(source.prefix.size() + sizeof number);
  token.append(source.prefix).append(number, end);
  return token;
}

std::shared_ptr<const ChainNode>& LeaseControl::head() {
  thread_local std::shared_ptr<const ChainNode> chain;
  return chain;
}

std::shared_ptr<const ChainNode> LeaseControl::chain_link(const std::shared_ptr<Lease>& lease,
                                                          std::shared_ptr<const ChainNode> parent, bool fresh) {
  LeaseState& l = state(*lease);
  const bool first = fresh ? !l.link_taken_.load(std::memory_order_relaxed) : !l.link_taken_.exchange(true);
  if (first) {
    l.link_taken_.store(true, std::memory_order_relaxed);
    l.link_ = ChainNode{lease.get(), std::move(parent)};
    return std::shared_ptr<const ChainNode>(lease, &l.link_);  // shares the lease's ownership
  }
  struct Held {
    ChainNode link;
    std::shared_ptr<Lease> keep;
  };
  auto held = std::make_shared<const Held>(Held{ChainNode{lease.get(), std::move(parent)}, lease});
  return std::shared_ptr<const ChainNode>(held, &held->link);
}

std::stop_source LeaseControl::mark_lost(LeaseState& l, const std::string& cause, bool even_if_released,
                                         bool hold_limit, bool& marked) {
  marked = false;
  std::stop_source stop(std::nostopstate);
  {
    std::lock_guard g(l.mutex_);
    std::uint32_t s = l.state_.load(std::memory_order_acquire);
    do {
      if (s & LeaseState::kLost) return stop;
      if (s == 0 && !even_if_released) return stop;
    } while (!l.state_.compare_exchange_weak(s, s | LeaseState::kLost, std::memory_order_acq_rel));
    l.cause_ = cause;  // read under the mutex, which we hold
    l.hold_limit_ = hold_limit;
    stop = l.stop_;  // none yet: the first stop_token() makes it stopped
  }
  ClientShared::Stats::add_to(l.client_->counters().lost);
  marked = true;
  return stop;
}

bool LeaseControl::record_lost(LeaseState& l, const std::string& cause, bool even_if_released, bool hold_limit) {
  bool marked = false;
  std::stop_source stop = mark_lost(l, cause, even_if_released, hold_limit, marked);
  // The running method hears of it first: a slow on_lost must not delay it.
  if (stop.stop_possible()) stop.request_stop();
  return marked;
}

Clock::time_point LeaseControl::hold_deadline(const LeaseState& l) noexcept {
  return l.watchdog_ && l.max_hold_ > std::chrono::milliseconds(0) ? l.acquired_at_ + l.max_hold_
                                                                    : Clock::time_point::max();
}

std::string LeaseControl::deadline_cause(const LeaseState& l, Clock::time_point now, bool& hold_limit) {
  const Clock::time_point expiry = l.expires_at(), held_until = hold_deadline(l);
  hold_limit = now >= held_until && held_until <= expiry;  // whichever came first
  if (hold_limit)
    return "it was held past its max_hold of " + std::to_string(l.max_hold_.count()) +
           " ms: no longer renewed, it runs out by itself";
  if (now < expiry) return "";
  if (!l.watchdog_) return "its fixed ttl of " + std::to_string(l.lease_time_.count()) + " ms ran out while it was held";
  return "its lease of " + std::to_string(l.lease_time_.count()) +
         " ms ran out before it was renewed (the process or its watchdog thread was held up, or the backend "
         "did not answer in time)";
}

bool LeaseControl::check_deadlines(LeaseState& l, Clock::time_point now, bool even_if_released) noexcept {
  if (is_lost(l)) return true;
  if (now < l.expires_at() && now < hold_deadline(l)) return false;
  try {
    bool hold_limit = false;
    const std::string cause = deadline_cause(l, now, hold_limit);
    if (record_lost(l, cause, even_if_released, hold_limit) && !even_if_released &&
        l.client_->pid == current_pid()) {  // (a fork()ed child's copy is the parent's to report)
      // While watched, its entry holds it; else the watchdog took it out as
      // lost and reports it itself.
      if (auto self = Watchdog::instance().entry_of(l)) LostNotifier::instance().post(std::move(self));
    }
  } catch (...) {
    // Out of memory, or no notifier thread: the watchdog reports it when it comes round.
  }
  return is_lost(l);
}

template <class F>
void LeaseControl::as_lost_error(const LeaseState& l, F&& f) {
  std::string cause;
  bool hold_limit;
  {
    std::lock_guard g(l.mutex_);
    cause = l.cause_;
    hold_limit = l.hold_limit_;
  }
  if (hold_limit)
    f(HoldLimitExceeded(l.key_, l.max_hold_, cause));
  else
    f(LeaseLost(l.key_, cause));
}

void LeaseControl::report_lost(LeaseState& l) {
  if (!is_lost(l) || l.lost_reported_.exchange(true)) return;
  const LockOptions& o = l.client_->options;
  // Callbacks must not throw; there is nobody to hand their error to.
  if (o.on_lost) {
    try {
      o.on_lost(l, l.lost_cause());
    } catch (...) {
    }
  }
  if (o.on_event) {
    try {
      as_lost_error(l, [&](const LeaseLost& e) {
        const std::string cause = l.lost_cause();
        o.on_event(Event{EventKind::lease_lost, "lock", l.key_, cause, e, &l});
      });
    } catch (...) {
    }
  }
}

void LeaseControl::mark_lost_later(const std::shared_ptr<LeaseState>& l, const std::string& cause, bool hold_limit) {
  record_lost(*l, cause, false, hold_limit);  // no-op when already lost (e.g. seen by the holder first)
  if (is_lost(*l) && !l->lost_reported_.load()) LostNotifier::instance().post(l);
}

void LeaseControl::release_failed(const LeaseState& l, const std::string& key, const std::string& cause, bool may_throw) {
  const ClientShared& c = *l.client_;
  ClientShared::Stats::add_to(c.counters().release_failures);
  ReleaseFailed error(key, cause);
  if (c.options.on_event) {
    try {
      c.options.on_event(Event{EventKind::release_failed, "lock", key, cause, error, &l});
    } catch (...) {
    }
  }
  if (may_throw && c.options.release_failure_policy == ReleaseFailurePolicy::throw_error) throw error;
}

bool LeaseControl::add_hold(LeaseState& l) {
  check_deadlines(l, Clock::now());
  std::uint32_t s = l.state_.load(std::memory_order_acquire);
  do {
    if ((s & ~LeaseState::kLost) == 0) return false;  // released
    if (s & LeaseState::kLost) {
      std::lock_guard g(l.mutex_);
      throw LeaseLost(l.key_, "the enclosing call's lease was lost (" + l.cause_ + ")");
    }
  } while (!l.state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel));
  return true;
}

void LeaseControl::drop_hold(const std::shared_ptr<Lease>& lp, bool may_throw) {
  LeaseState& l = state(*lp);
  const ClientShared& c = *l.client_;
  std::uint32_t s = l.state_.load(std::memory_order_acquire);
  do {
    if ((s & ~LeaseState::kLost) == 0) return;  // released already
  } while (!l.state_.compare_exchange_weak(s, s - 1));  // seq_cst: see Watchdog::watch()
  const bool last = (s & ~LeaseState::kLost) == 1;
  if (last && c.pid != current_pid()) return;  // a fork()ed child's copy: the lease is the parent's
  if (last) {
    ClientShared::Stats::add_to(c.counters().released);
    Watchdog::instance().unwatch(l);
    // One clock reading for the deadline check and the mem:// release. A
    // lease a second or more before its deadlines is within them by either
    // clock: the coarse one does (it lags steady_clock by a tick, ~4 ms).
    Clock::time_point now = coarse_now();
    if (now + std::chrono::seconds(1) >= std::min(l.expires_at(), hold_deadline(l))) now = Clock::now();
    check_deadlines(l, now, true);  // ran out (or past max_hold) before this release
    if (!l.on_expiry_) {
      // Every key, even after a failure (the others must not wait for their ttl).
      bool lost = false;
      std::string failed_key, failure;
      auto release = [&](const std::string& key) {
        try {
          ReleaseResult r = c.backend->release({key, l.owner_, l.type_, now});
          lost = lost || r == ReleaseResult::lost;
        } catch (...) {
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
      };
      release(l.key_);
      for (const auto& [key, fence] : l.more_) release(key);
      if (lost) record_lost(l, "it expired or was taken by another owner before release", true);
      // A lease already known lost owns nothing the failed call could free: the
      // loss is what the caller must hear (per policy), not the backend error.
      if (!failed_key.empty() && !is_lost(l)) return release_failed(l, failed_key, failure, may_throw);
    }
  }
  if (last ? !is_lost(l) : !l.lost()) return;  // (the last hold checked the deadlines above)
  report_lost(l);  // unless the watchdog's notifier did already
  if (may_throw && c.options.lost_policy == LeaseLostPolicy::throw_at_release)
    as_lost_error(l, [](const auto& e) { throw e; });  // its own type: HoldLimitExceeded or LeaseLost
}

}  // namespace detail

// ---- Lease: its accessors read the LeaseState it is ----

using detail::state;

const std::string& Lease::key() const noexcept { return state(*this).key_; }
LockType Lease::type() const noexcept { return state(*this).type_; }
const std::string& Lease::owner_token() const noexcept { return state(*this).owner_; }
std::uint64_t Lease::fencing_token() const noexcept { return state(*this).fence_; }
bool Lease::renewed() const noexcept { return state(*this).watchdog_; }
std::chrono::milliseconds Lease::lease_time() const noexcept { return state(*this).lease_time_; }
std::chrono::milliseconds Lease::max_hold() const noexcept { return state(*this).max_hold_; }
Lease::clock::time_point Lease::acquired_at() const noexcept { return state(*this).acquired_at_; }
Lease::clock::time_point Lease::expires_at() const noexcept { return state(*this).expires_at(); }

std::vector<std::string_view> Lease::keys() const {
  const detail::LeaseState& s = state(*this);
  std::vector<std::string_view> out{s.key_};
  for (const auto& [key, fence] : s.more_) out.push_back(key);
  return out;
}

bool Lease::holds(std::string_view key) const noexcept {
  const detail::LeaseState& s = state(*this);
  if (key == s.key_) return true;
  for (const auto& [k, fence] : s.more_)
    if (k == key) return true;
  return false;
}

std::uint64_t Lease::fencing_token(std::string_view key) const {
  const detail::LeaseState& s = state(*this);
  if (key == s.key_) return s.fence_;
  for (const auto& [k, fence] : s.more_)
    if (k == key) return fence;
  throw UsageError("lease on '" + s.key_ + "' does not hold key '" + std::string(key) + "'");
}

// A const accessor may mark the lease lost: its deadline passed, and the
// holder asking must not hear otherwise (Lease objects are never const).
bool Lease::lost() const noexcept {
  return detail::LeaseControl::check_deadlines(const_cast<detail::LeaseState&>(state(*this)), clock::now());
}

std::stop_token Lease::stop_token() const noexcept {
  lost();  // fires the token first when a deadline has passed
  const detail::LeaseState& s = state(*this);
  std::stop_source stop(std::nostopstate);
  bool lost_already;
  {
    std::lock_guard g(s.mutex_);
    if (!s.stop_.stop_possible()) {
      try {
        s.stop_ = std::stop_source();
      } catch (...) {
        return {};  // out of memory: a token that never fires
      }
    }
    stop = s.stop_;
    lost_already = detail::LeaseControl::is_lost(s);
  }
  if (lost_already) {
    stop.request_stop();  // lost before the token was made
  } else if (!s.wd_asked_.load(std::memory_order_acquire) && !detail::LeaseControl::released(s)) {
    // A fixed-ttl lease not watched yet: its token must fire at its expiry.
    detail::Watchdog::instance().watch(const_cast<detail::LeaseState&>(s), nullptr, /*fresh=*/false);
  }
  return stop.get_token();
}

std::string Lease::lost_cause() const {
  lost();
  const detail::LeaseState& s = state(*this);
  std::lock_guard g(s.mutex_);
  return s.cause_;
}

std::chrono::milliseconds Lease::remaining() const noexcept {
  auto left = expires_at() - clock::now();
  if (left <= clock::duration::zero()) return std::chrono::milliseconds(0);
  return std::chrono::ceil<std::chrono::milliseconds>(left);  // 0 only once the deadline passed
}

// ---- call chain ----

const Lease* current_lease() noexcept {
  const auto& head = detail::LeaseControl::head();
  return head ? head->lease : nullptr;
}

const Lease* current_lease(std::string_view key) noexcept {
  for (const detail::ChainNode* n = detail::LeaseControl::head().get(); n; n = n->parent.get())
    if (n->lease->holds(key)) return n->lease;
  return nullptr;
}

CallContext CallContext::capture() noexcept {
  CallContext c;
  c.head_ = detail::LeaseControl::head();
  return c;
}

CallContext::Scope::Scope(const CallContext& ctx) noexcept
    : previous_(std::exchange(detail::LeaseControl::head(), ctx.head_)) {}

CallContext::Scope::~Scope() { detail::LeaseControl::head() = std::move(previous_); }

LeaseScope::LeaseScope(const LeaseHandle& handle) {
  if (!handle) throw UsageError("LeaseScope needs a handle that holds a lease");
  auto& head = detail::LeaseControl::head();
  previous_ = head;
  head = detail::LeaseControl::chain_link(handle.shared(), previous_, /*fresh=*/false);
}

LeaseScope::~LeaseScope() { detail::LeaseControl::head() = std::move(previous_); }

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

LeaseHandle::~LeaseHandle() { drop(false); }

const Lease& LeaseHandle::lease() const {
  if (!lease_) throw UsageError("this LeaseHandle holds no lease");
  return *lease_;
}

void LeaseHandle::release() { drop(true); }

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
