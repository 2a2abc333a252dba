// A held semaphore permit (weave::SemaphorePermit): a core lease renewed by
// the one Renewer through its quota runtime (the renew group), lost like
// every lease, given back by its Permit.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/call_context.h"
#include "core/lease_core.h"
#include "quota/quota_runtime.h"
#include "weave/semaphore.h"

namespace WEAVE_NAMESPACE::detail {

class HeldPermit final : public LeaseCore, public SemaphorePermit, public std::enable_shared_from_this<HeldPermit> {
 public:
  using Clock = std::chrono::steady_clock;
  // Granted to `owner` with `token` (of a semaphore of `permits`) for a
  // request sent at `sent`; renewed by `runtime` from now on. `first_term`:
  // a release's grant to this waiter, which lasts that long (its place in
  // line) until the first renewal; 0 for a request's grant (a lease).
  HeldPermit(std::string_view key, std::string owner, std::uint64_t token, std::uint32_t permits,
             std::chrono::milliseconds lease, std::chrono::milliseconds first_term, Clock::time_point sent,
             std::shared_ptr<QuotaRuntime> runtime, SemaphoreSeries& series);
  ~HeldPermit() = default;
  // Both bases answer these; the core's are the same, minus the view's const.
  using LeaseCore::expires_at;
  using LeaseCore::renewed;
  using LeaseCore::stop_token;

  std::uint64_t token() const noexcept { return token_; }
  QuotaRuntime& runtime() const noexcept;
  // The grant as the Permit its caller holds (watched by the renewer from now on).
  static Permit hand_out(std::shared_ptr<HeldPermit> held);
  // Gives it back to the store (Permit::release()).
  bool give_back();
  // The permit as the head of the call's context, on `parent` (the context
  // it runs in): once per permit ([[semaphore]]'s call pushes it once).
  std::shared_ptr<const ContextLink> context_link(std::shared_ptr<const ContextLink> parent);
  // The one a Permit holds.
  static HeldPermit& of(const Permit& p) noexcept { return *p.held_; }

 private:
  std::string ran_out_cause() const override;
  std::string gone_cause() const override;
  void count_lost() noexcept override;   // QuotaStats::permits_lost
  void report_lost() noexcept override;  // on_event: lease_lost
  // Counts in its runtime's QuotaStats and in its key template's series.
  void count(std::atomic<std::uint64_t> QuotaCounterStripe::*field) noexcept;
  std::uint64_t token_;
  std::uint32_t permits_;  // given back with it: the next waiter's grant is counted against them
  SemaphoreSeries& series_;
  ContextLink link_;  // context_link()
  pid_t pid_;  // the process it was granted to (a fork()ed child's copy gives nothing back)
};

}  // namespace weave::detail
