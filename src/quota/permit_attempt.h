// One semaphore request's steps, driven by a caller that waits its own way:
// Semaphore and the blocking interceptor on this thread (a ChangeWaiter's
// wait_until), the interceptor of asynchronous methods with a timer and
// ChangeWaiter::wake_on_change (src/quota/asio/).
//
//   PermitAttempt a(rt, key, spec, series);          // checks the request (UsageError)
//   PermitWaiter* waiter = a.waits() ? &a.prepare_wait(WaitOn::this_thread) : nullptr;   // before the first step
//   for (;;) {
//     std::optional<Clock::time_point> again;
//     if (Permit p = a.step(again)) return p;        // granted (by the store, or a release)
//     if (!again) return {};                         // the wait ran out (counted, out of line)
//     waiter->wait_until(*again);                    // a release, or the time to ask again
//   }
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "quota/quota_runtime.h"
#include "quota/semaphore_store.h"
#include "weave/semaphore.h"

namespace WEAVE_NAMESPACE::detail {

// The most permits a semaphore may have (annotations/semaphore.json says the same).
inline constexpr std::uint32_t kMaxPermits = 1'000'000;

class PermitAttempt {
 public:
  using Clock = std::chrono::steady_clock;
  // Throws UsageError for a bad key or spec (naming the key). Counted in
  // `rt`'s stats and in `series` (the key template's).
  PermitAttempt(QuotaRuntime& rt, std::string_view key, const SemaphoreSpec& spec, SemaphoreSeries& series);
  // A request that ends in line (cancelled, or failed) leaves it.
  ~PermitAttempt();
  PermitAttempt(const PermitAttempt&) = delete;
  PermitAttempt& operator=(const PermitAttempt&) = delete;

  bool waits() const noexcept { return place_.count() > 0; }
  using WaitOn = SemaphoreStore::WaitOn;
  // The waiter the caller waits on between steps (kept by the attempt): made
  // before the first step, so a release in between is not missed.
  PermitWaiter& prepare_wait(WaitOn how);
  // The permit a release granted this caller (told by the waiter), else one
  // request to the store: the permit, or an empty Permit with `again` set
  // to when to ask again at the latest (woken sooner by a release), or left
  // empty once the wait ran out (counted as busy, the line left). Throws
  // the store's error (counted, naming the key).
  Permit step(std::optional<Clock::time_point>& again);
  std::chrono::milliseconds waited() const noexcept { return waited_; }
  const std::string& key() const noexcept { return key_; }
  std::uint32_t permits() const noexcept { return permits_; }

 private:
  void leave_line() noexcept;
  // The grant (from the store's reply, or a release's message: `first_term`
  // then its place) as the Permit.
  Permit granted(std::uint64_t fencing_token, Clock::time_point sent, Clock::time_point now,
                 std::chrono::milliseconds first_term = std::chrono::milliseconds(0));
  PermitRequest request() const noexcept { return {key_, owner_, permits_, lease_, place_}; }
  void count(std::atomic<std::uint64_t> QuotaCounterStripe::*field, std::uint64_t n = 1) noexcept;
  QuotaRuntime& rt_;
  SemaphoreSeries& series_;
  std::string key_, owner_;
  std::uint32_t permits_;
  std::chrono::milliseconds lease_, place_;
  Clock::time_point start_, deadline_;
  Clock::time_point last_sent_;  // of the last request: before any grant a release made it
  std::unique_ptr<PermitWaiter> waiter_;
  std::chrono::milliseconds waited_{0};
  bool in_line_ = false;
};

// The steps until granted or the wait ran out, waiting on this thread
// (Semaphore, the blocking interceptor).
Permit take_on_this_thread(PermitAttempt& a);

}  // namespace weave::detail
