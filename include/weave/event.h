// weave/event.h — failures reported to a hook, thrown or not.
//
// Some failures are better not thrown: a lock that could not be given back
// after its method completed (the result is returned; the lease runs out by
// itself), a lease lost while its method ran under LeaseLostPolicy::callback.
// Every such event is counted (LockStats) and handed to the hook of the
// options in force (LockOptions::on_event), also when it is thrown:
//
//   o.on_event = [](const weave::Event& e) {
//     log.warn("weave {} {}: {}", e.feature, weave::to_string(e.kind), e.error.what());
//   };
//
// One hook type and one Event for every feature: later ones (cache, dedupe,
// queue) report through it with their own `feature` and kinds.
#pragma once

#include "weave/abi.h"

#include <functional>
#include <string_view>

namespace WEAVE_NAMESPACE {

class Error;
class HeldLease;
class Lease;

enum class EventKind {
  release_failed,  // a lease was not given back (backend error); it runs out by itself
  lease_lost,      // a lease of any feature (a lock's, a dedupe claim) was lost while held:
                   // ran out, taken, not renewed, past max_hold; error is a weave::LeaseLost
  cache_error,     // the cache could not be read or written; the method ran (or its result was returned) anyway
  dedupe_error,    // [[dedupe]]: the method ran but the store failed to record its outcome
};

inline std::string_view to_string(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::release_failed: return "release_failed";
    case EventKind::lease_lost: return "lease_lost";
    case EventKind::cache_error: return "cache_error";
    case EventKind::dedupe_error: return "dedupe_error";
  }
  return "unknown";
}

struct WEAVE_API Event {
  EventKind kind;
  std::string_view feature;  // "lock", "cache", "dedupe"
  std::string_view key;      // the key concerned
  std::string_view cause;    // why, in words (e.g. the backend's error text)
  const Error& error;        // the typed error that is (or, by policy, is not) thrown; names the key
  const Lease* lease;        // lock events: the lease concerned; else null
  // lease_lost, of every feature: the lease that was lost (a lock's Lease,
  // a dedupe claim); release_failed: the lock's lease. Else null.
  const HeldLease* held_lease = nullptr;
};

// May be called from several threads at once (the releasing thread, the
// lock's notifier thread). Must be quick and must not throw (an exception is
// dropped: there is nobody to hand it to). Event's views last for the call.
using EventHook = std::function<void(const Event&)>;

}  // namespace weave
