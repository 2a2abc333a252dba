// One-shot wake-ups of waiters that hold no thread (an asynchronous call's
// LockWaiter / ClaimWaiter::wake_on_change): each waiter leaves at most one,
// a change runs and drops them all. Not locked: it lives beside the state it
// watches, under that state's lock.
//
//   // under the lock: arm, unless the change came already
//   armed = wakes.arm(this, wake, /*changed=*/generation != seen);
//   // after the lock:
//   if (!armed) wake();
//   // the change, under the lock:
//   ++generation;
//   wakes.fire();
#pragma once

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace WEAVE_NAMESPACE::detail {

class WakeList {
 public:
  // Replaces `owner`'s wake-up by `wake`, unless `changed`: then drops it and
  // returns false (the caller runs `wake` itself, after its lock).
  bool arm(const void* owner, std::function<void()>& wake, bool changed) {
    drop(owner);
    if (changed) return false;
    wakes_.emplace_back(owner, std::move(wake));
    return true;
  }
  void drop(const void* owner) {
    std::erase_if(wakes_, [owner](const auto& w) { return w.first == owner; });
  }
  // Runs and forgets every wake-up (quick: they only post a resumption).
  void fire() {
    if (wakes_.empty()) return;  // (the common case: no vector made or freed)
    for (auto& [owner, wake] : std::exchange(wakes_, {})) wake();
  }

 private:
  std::vector<std::pair<const void*, std::function<void()>>> wakes_;
};

}  // namespace weave::detail
