// A waiter for a change of one key's state in a store (a dedupe record
// finished, a semaphore permit given back): made before the request whose
// refusal it waits out, so a change in between is not missed. A mem://
// table's come from its ChangeBell (below); Redis's are Pub/Sub
// subscriptions (store::ChangeSubscription).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/process.h"
#include "core/wake_list.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

class ChangeWaiter {
 public:
  virtual ~ChangeWaiter() = default;
  // True once the key's state changed since the waiter was made or last
  // returned true (may be spurious); false at the deadline. Reusable.
  virtual bool wait_until(std::chrono::steady_clock::time_point deadline) = 0;
  // For waiting without a thread (asynchronous methods): runs `wake` once at
  // the key's next change after the last true (at once if one came), on
  // whichever thread learns of it; quick, never calling the store. A later
  // call replaces an earlier one. False: this store cannot (the default).
  virtual bool wake_on_change(std::function<void()> wake) {
    (void)wake;
    return false;
  }
};

// The changes of a mem:// table, for its waiters: one generation per table
// (a wake-up is at worst spurious for other keys), rung after each change a
// waiter may be waiting for. Made with std::make_shared; its waiters keep it.
//
//   std::unique_ptr<ChangeWaiter> w = bell_->waiter();   // before the request
//   ... a release, under the table's lock or after it:
//   bell_->ring();
class ChangeBell : public std::enable_shared_from_this<ChangeBell> {
 public:
  std::unique_ptr<ChangeWaiter> waiter();
  void ring();

 private:
  class Waiter;
  Mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t generation_ WEAVE_GUARDED_BY(mutex_) = 0;
  WakeList wakes_ WEAVE_GUARDED_BY(mutex_);  // Waiter::wake_on_change
};

}  // namespace weave::detail
