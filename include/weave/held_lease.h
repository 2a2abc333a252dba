// weave/held_lease.h — what every held lease answers, whichever feature holds
// it: a lock's weave::Lease, a [[dedupe]] first call's weave::DedupeClaim.
//
// A lease is held in the store for lease_time() and renewed while its call
// runs. It is lost when a renewal finds it gone (it ran out, another owner
// may hold it now) or when its local deadline passes without a renewal (the
// process was paused: SIGSTOP, a VM stall). A body that runs long asks:
//
//   void work(const weave::HeldLease& held) {
//     for (auto& step : steps) {
//       if (held.stop_token().stop_requested()) throw Abandoned(held.lost_cause());
//       step();
//     }
//   }
//   work(*weave::current_lease());         // inside a [[lock]] method
//   work(*weave::current_dedupe_claim());  // inside a [[dedupe]] method
//
// A lost lease is reported once to the feature's on_event hook as
// EventKind::lease_lost, with a weave::LeaseLost naming the key.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <stop_token>
#include <string>

namespace WEAVE_NAMESPACE {

namespace detail {
class LeaseCore;
}

// Never made, moved or copied by users: each feature's lease is one. Owned
// by the call holding it (not by a thread); every accessor is thread-safe.
class WEAVE_API HeldLease {
 public:
  using clock = std::chrono::steady_clock;

  HeldLease(const HeldLease&) = delete;
  HeldLease& operator=(const HeldLease&) = delete;

  // The key (for a multi-key lock lease, the first in sorted order).
  const std::string& key() const noexcept;
  // Unique per acquisition in the whole deployment; the store checks it on
  // every renewal and release.
  const std::string& owner_token() const noexcept;
  // Fires when the lease is lost (not on a normal release). Each call of
  // stop_token() and lost() also checks the local deadline, so a holder
  // resuming from a pause sees the loss at once, before the renewer has run:
  // ask again rather than keep a std::stop_token from before a pause.
  std::stop_token stop_token() const noexcept;
  // True once lost; stays true.
  bool lost() const noexcept;
  // Why it was lost ("" while not lost).
  std::string lost_cause() const;
  // How long the store keeps it from its acquisition or last renewal.
  std::chrono::milliseconds lease_time() const noexcept;
  // When it runs out unless renewed (local, conservative: moves forward with
  // each renewal).
  clock::time_point expires_at() const noexcept;
  // expires_at() - now rounded up, or 0 once it passed (lost() is then true).
  std::chrono::milliseconds remaining() const noexcept;

 protected:
  explicit HeldLease(detail::LeaseCore& core) noexcept : core_(&core) {}
  ~HeldLease() = default;

 private:
  detail::LeaseCore* core_;  // the library's state of this lease
};

}  // namespace weave
