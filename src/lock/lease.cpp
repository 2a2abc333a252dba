// Lease state changes, LeaseHandle, and the per-thread call chain.
#include <uuid/uuid.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <utility>

#include "internal.h"
#include "weave/error.h"

namespace weave {
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

bool LeaseControl::record_lost(Lease& l, const std::string& cause, bool even_if_released) {
  {
    std::lock_guard g(l.mutex_);
    if (l.lost_.load(std::memory_order_relaxed)) return false;
    if (l.released_ && !even_if_released) return false;
    l.cause_ = cause;
    l.lost_.store(true, std::memory_order_release);
  }
  l.client_->counters.lost.fetch_add(1, std::memory_order_relaxed);
  // The running method hears of it first: a slow on_lost must not delay it.
  l.stop_.request_stop();
  return true;
}

void LeaseControl::report_lost(Lease& l, const std::string& cause) {
  if (l.lost_reported_.exchange(true) || !l.client_->options.on_lost) return;
  try {
    l.client_->options.on_lost(l, cause);
  } catch (...) {
    // A callback must not throw; there is nobody to hand the error to.
  }
}

bool LeaseControl::mark_lost(Lease& l, const std::string& cause, bool even_if_released) {
  if (!record_lost(l, cause, even_if_released)) return false;
  report_lost(l, cause);
  return true;
}

bool LeaseControl::mark_lost_later(const std::shared_ptr<Lease>& l, const std::string& cause) {
  if (!record_lost(*l, cause, false)) return false;
  LostNotifier::instance().post(l, cause);
  return true;
}

bool LeaseControl::add_hold(Lease& l) {
  std::lock_guard g(l.mutex_);
  if (l.released_) return false;
  if (l.lost_.load(std::memory_order_relaxed))
    throw LeaseLost(l.key_, "the enclosing call's lease was lost (" + l.cause_ + ")");
  ++l.holds_;
  return true;
}

void LeaseControl::drop_hold(const std::shared_ptr<Lease>& lp, bool may_throw) {
  Lease& l = *lp;
  const ClientShared& c = *l.client_;
  bool last;
  {
    std::lock_guard g(l.mutex_);
    if (l.released_) return;
    last = --l.holds_ == 0;
    if (last) l.released_ = true;
  }
  if (last && c.pid != current_pid()) return;  // a fork()ed child's copy: the lease is the parent's
  if (last) {
    c.counters.released.fetch_add(1, std::memory_order_relaxed);
    Watchdog::instance().unwatch(&l);
    if (!l.watchdog_ && Clock::now() >= l.expires_at())
      mark_lost(l, "its fixed ttl of " + std::to_string(l.lease_time_.count()) +
                       " ms ran out before release", true);
    if (!l.on_expiry_) {
      // Every key, even after a failure (the others must not wait for their ttl).
      bool lost = false;
      std::exception_ptr error;
      auto release = [&](const std::string& key) {
        try {
          ReleaseResult r = l.type_ == LockType::reentrant ? c.backend->release(key, l.owner_)
                                                           : c.backend->release_as(l.type_, key, l.owner_);
          lost = lost || r == ReleaseResult::lost;
        } catch (Error& e) {
          detail::name_key(e, key);
          if (!error) error = std::current_exception();
        } catch (...) {
          if (!error) error = std::current_exception();
        }
      };
      release(l.key_);
      for (const auto& [key, fence] : l.more_) release(key);
      if (lost) mark_lost(l, "it expired or was taken by another owner before release", true);
      // A lease already known lost owns nothing the failed call could free: the
      // loss is what the caller must hear (per policy), not the I/O error.
      if (error && !l.lost()) {
        if (may_throw) std::rethrow_exception(error);
        return;
      }
    }
  }
  if (may_throw && l.lost() && c.options.lost_policy == LeaseLostPolicy::throw_at_release)
    throw LeaseLost(l.key_, l.lost_cause());
}

}  // namespace detail

// ---- Lease ----

Lease::Lease(detail::LeaseInit&& init)
    : key_(std::move(init.key)),
      more_(std::move(init.more)),
      type_(init.type),
      owner_(std::move(init.owner)),
      fence_(init.fence),
      watchdog_(init.watchdog),
      on_expiry_(init.on_expiry),
      lease_time_(init.lease_time),
      acquired_at_(init.acquired_at),
      expires_at_((init.acquired_at + init.lease_time).time_since_epoch().count()),
      client_(std::move(init.client)) {}

Lease::~Lease() = default;

std::vector<std::string_view> Lease::keys() const {
  std::vector<std::string_view> out{key_};
  for (const auto& [key, fence] : more_) out.push_back(key);
  return out;
}

bool Lease::holds(std::string_view key) const noexcept {
  if (key == key_) return true;
  for (const auto& [k, fence] : more_)
    if (k == key) return true;
  return false;
}

std::uint64_t Lease::fencing_token(std::string_view key) const {
  if (key == key_) return fence_;
  for (const auto& [k, fence] : more_)
    if (k == key) return fence;
  throw UsageError("lease on '" + key_ + "' does not hold key '" + std::string(key) + "'");
}

std::string Lease::lost_cause() const {
  std::lock_guard g(mutex_);
  return cause_;
}

std::chrono::milliseconds Lease::remaining() const noexcept {
  auto left = expires_at() - clock::now();
  if (left <= clock::duration::zero()) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(left);
}

// ---- call chain ----

const Lease* current_lease() noexcept {
  const auto& head = detail::LeaseControl::head();
  return head ? head->lease.get() : nullptr;
}

const Lease* current_lease(std::string_view key) noexcept {
  for (const detail::ChainNode* n = detail::LeaseControl::head().get(); n; n = n->parent.get())
    if (n->lease->holds(key)) return n->lease.get();
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
  head = std::make_shared<const detail::ChainNode>(detail::ChainNode{handle.shared(), previous_});
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
