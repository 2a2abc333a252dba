// weave/lease.h — a held lock lease, and the call chain that holds it.
//
// A Lease is what a lock acquisition gives you: the key, the owner token that
// proves ownership to the backend, a fencing token to hand to storage (strictly
// increasing per key: reject writes carrying an older one), and a stop_token
// that fires if the lease is lost while you still think you hold it.
//
//   [[lock(key="order:<id>")]] void pay(const std::string& id) {
//     const weave::Lease* l = weave::current_lease("order:" + id);
//     db.write(id, l->fencing_token());
//     for (auto& step : steps) {
//       if (l->stop_token().stop_requested()) return;   // lost: someone else may hold it now
//       step();
//     }
//   }
//
// Ownership is the lease's owner token, not the thread: a call chain may hop
// threads. The chain of leases held by the running call is thread-local; carry
// it along with CallContext when the call continues elsewhere:
//
//   weave::CallContext ctx = weave::CallContext::capture();
//   pool.submit([ctx] { weave::CallContext::Scope in(ctx); svc.pay("1"); });  // reuses the lease
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace WEAVE_NAMESPACE {

class LockBackend;
struct LockOptions;
enum class LockType;

namespace detail {
struct ChainNode;
struct ClientShared;
struct LeaseControl;
struct LeaseState;
}  // namespace detail

// One acquired lease. Created by LockClient; always owned through
// std::shared_ptr and never moved, so `const Lease*` stays valid while the
// handle (or the call chain) holds it. All accessors are thread-safe. The
// class holds no data: its state lives in the library (detail::LeaseState,
// the one class derived from it), so this header needs no mutex or atomic.
class WEAVE_API Lease {
 public:
  using clock = std::chrono::steady_clock;

  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // The key; for a multi-key lease (LockClient::acquire_all) the first of
  // its keys in sorted order.
  const std::string& key() const noexcept;
  // Every key of the lease, sorted (one for a single-key lease).
  std::vector<std::string_view> keys() const;
  // True when `key` is one of the lease's keys.
  bool holds(std::string_view key) const noexcept;
  // reentrant, fair, read or write.
  LockType type() const noexcept;
  // Unique per acquisition (a random UUID); the backend checks it on
  // release and renewal.
  const std::string& owner_token() const noexcept;
  // Strictly increasing per key across acquisitions. For a multi-key lease,
  // the token of key().
  std::uint64_t fencing_token() const noexcept;
  // The token of one of the lease's keys; UsageError for a key it does not hold.
  std::uint64_t fencing_token(std::string_view key) const;
  // Fires when the lease is lost (not on a normal release). Each call of
  // stop_token() and lost() also checks the lease's local deadlines (expiry,
  // max_hold): a holder resuming from a pause past them (SIGSTOP, a long GC
  // or VM stall) sees the loss at once, before the watchdog thread has run.
  // So ask again rather than keep a std::stop_token from before the pause.
  std::stop_token stop_token() const noexcept;
  // True once lost: its local deadline passed, it was held past max_hold, or
  // the backend says it expired or went to another owner.
  bool lost() const noexcept;
  // Why it was lost ("" while not lost).
  std::string lost_cause() const;

  // True in watchdog mode (renewed while held); false for a fixed ttl.
  bool renewed() const noexcept;
  // The lease length: the fixed ttl, or the watchdog lease.
  std::chrono::milliseconds lease_time() const noexcept;
  // How long the watchdog renews it at most (LockSpec::max_hold; 0 = no limit).
  std::chrono::milliseconds max_hold() const noexcept;
  clock::time_point acquired_at() const noexcept;
  // When the lease runs out unless renewed (a local, conservative estimate;
  // moves forward with each renewal).
  clock::time_point expires_at() const noexcept;
  // expires_at() - now rounded up, or 0 once it passed (lost() is then true).
  std::chrono::milliseconds remaining() const noexcept;

 private:
  friend struct detail::LeaseState;  // the only implementation
  Lease() noexcept = default;
  ~Lease() = default;  // destroyed as a LeaseState (through std::shared_ptr)
};

// The innermost lease held by the running call chain, or null.
WEAVE_API const Lease* current_lease() noexcept;
// The innermost lease on `key` held by the running call chain, or null.
WEAVE_API const Lease* current_lease(std::string_view key) noexcept;

// The chain of leases held by the running call (innermost first). Capture it
// where a call continues on another thread, and install it there with Scope.
// Installing it does not transfer anything: the leases stay owned by their
// handles, which the original call releases as usual.
class WEAVE_API CallContext {
 public:
  CallContext() noexcept = default;
  static CallContext capture() noexcept;
  bool empty() const noexcept { return head_ == nullptr; }

  // Installs a captured chain on this thread for the scope's lifetime, then
  // restores what was there. Scopes nest; destroy them in reverse order.
  class Scope {
   public:
    explicit Scope(const CallContext& ctx) noexcept;
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::shared_ptr<const detail::ChainNode> previous_;
  };

 private:
  friend struct detail::LeaseControl;
  std::shared_ptr<const detail::ChainNode> head_;
};

}  // namespace weave
