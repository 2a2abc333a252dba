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
// Ownership is the lease's owner token, not the thread: a call may hop
// threads. The leases held by the running call are its weave::CallContext
// (weave/call_context.h), which travels with an async call by itself and is
// carried to another thread by hand.
#pragma once

#include "weave/abi.h"
#include "weave/call_context.h"
#include "weave/held_lease.h"

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
class LeaseCore;
struct ClientShared;
struct LeaseControl;
struct LeaseState;
struct LockSeries;
}  // namespace detail

// One acquired lease. Created by LockClient; always owned through
// std::shared_ptr and never moved, so `const Lease*` stays valid while the
// handle (or the call chain) holds it. All accessors are thread-safe. What
// every feature's lease answers (key, owner token, stop token, loss, expiry)
// is weave::HeldLease's; a Lease adds what only a lock has. It holds no data:
// its state lives in the library (detail::LeaseState, the one class derived
// from it), so this header needs no mutex or atomic.
//
// Lease::key() is the first key in sorted order for a multi-key lease
// (LockClient::acquire_all); its owner token is a random 128-bit value and a
// counter, checked by the backend on release and renewal. lost() is true
// once its local deadlines passed (expiry, max_hold), or the backend said it
// expired or went to another owner.
class WEAVE_API Lease : public HeldLease {
 public:
  // Every key of the lease, sorted (one for a single-key lease).
  std::vector<std::string_view> keys() const;
  // True when `key` is one of the lease's keys.
  bool holds(std::string_view key) const noexcept;
  // reentrant, fair, read or write.
  LockType type() const noexcept;
  // Strictly increasing per key across acquisitions. For a multi-key lease,
  // the token of key().
  std::uint64_t fencing_token() const noexcept;
  // The token of one of the lease's keys; UsageError for a key it does not hold.
  std::uint64_t fencing_token(std::string_view key) const;

  // True in watchdog mode (renewed while held); false for a fixed ttl.
  bool renewed() const noexcept;
  // How long the watchdog renews it at most (LockSpec::max_hold; 0 = no limit).
  std::chrono::milliseconds max_hold() const noexcept;
  clock::time_point acquired_at() const noexcept;

 private:
  friend struct detail::LeaseState;  // the only implementation
  explicit Lease(detail::LeaseCore& core) noexcept : HeldLease(core) {}
  ~Lease() = default;  // destroyed as a LeaseState (through std::shared_ptr)
};

// The innermost lease held by the running call chain, or null.
WEAVE_API const Lease* current_lease() noexcept;
// The innermost lease on `key` held by the running call chain, or null.
WEAVE_API const Lease* current_lease(std::string_view key) noexcept;

}  // namespace weave
