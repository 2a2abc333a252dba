// The process-wide state of rate limits and semaphores: options, the
// stores for the URL, counters, the renewal of held permits (core leases).
// A RateLimiter or Semaphore made with options of its own has one of these
// to itself.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/feature_runtime.h"
#include "core/lease_core.h"
#include "core/metrics.h"
#include "core/striped.h"
#include "quota/rate_store.h"
#include "quota/semaphore_store.h"
#include "weave/quota.h"

namespace WEAVE_NAMESPACE::detail {

// One stripe of QuotaStats' counters, on a cache line of its own.
struct alignas(64) QuotaCounterStripe {
  std::atomic<std::uint64_t> admitted{0}, waited{0}, limited{0}, errors{0};
  std::atomic<std::uint64_t> permits_acquired{0}, permits_waited{0}, permits_busy{0}, permits_released{0},
      permits_lost{0}, permits_reclaimed{0}, permit_errors{0};
};

// The metrics of one [[rate_limit]] key template ("" for RateLimiter's own
// calls): weave_rate_limit_* (quota_metrics.cpp).
struct RateSeries {
  StripedCounters<QuotaCounterStripe> counts;
  DurationHistogram wait;  // admitted calls' wait for their turn
};
RateSeries& rate_series(std::string_view key_template);

// The metrics of one [[semaphore]] key template ("" for Semaphore's own
// calls): weave_semaphore_* (quota_metrics.cpp), from the stripes' permit
// fields.
struct SemaphoreSeries {
  StripedCounters<QuotaCounterStripe> counts;
  DurationHistogram wait;  // granted requests' wait for a permit
};
SemaphoreSeries& semaphore_series(std::string_view key_template);

// The renew group of its held permits: one SemaphoreStore::renew() per
// period for all of them (the Renewer batches per group).
class QuotaRuntime final : public RenewGroup, public std::enable_shared_from_this<QuotaRuntime> {
 public:
  explicit QuotaRuntime(QuotaOptions options);
  const QuotaOptions& options() const noexcept { return options_; }
  RateStore& rates() noexcept { return *rates_; }
  SemaphoreStore& semaphores() noexcept { return *semaphores_; }
  void count(std::atomic<std::uint64_t> QuotaCounterStripe::*field, std::uint64_t n = 1) noexcept {
    counters_.add(field, n);
  }
  QuotaStats stats() const;

 private:
  void renew(std::span<LeaseCore* const> permits, std::vector<bool>& owned) const override;
  std::string_view feature() const noexcept override { return "semaphore"; }
  const EventHook& event_hook() const noexcept override { return options_.on_event; }
  std::shared_ptr<const RenewGroup> owning_ref() const override { return shared_from_this(); }
  QuotaOptions options_;
  std::shared_ptr<RateStore> rates_;
  std::shared_ptr<SemaphoreStore> semaphores_;
  mutable StripedCounters<QuotaCounterStripe> counters_;
};

// The process-wide runtime (configure_quota, else the defaults): a call
// takes it with `QuotaRuntimeRef rt;` (no lock, no shared count).
using QuotaRuntimeSlot = RuntimeSlot<QuotaRuntime, QuotaOptions>;
QuotaRuntimeSlot& quota_runtime_slot();

class QuotaRuntimeRef : public QuotaRuntimeSlot::Ref {
 public:
  QuotaRuntimeRef() : QuotaRuntimeSlot::Ref(quota_runtime_slot()) {}
};

// f(runtime): `own` (a RateLimiter's or Semaphore's own options) when set,
// else the process-wide one.
template <class F>
decltype(auto) with_runtime(const std::shared_ptr<QuotaRuntime>& own, F&& f) {
  if (own) return f(*own);
  const QuotaRuntimeRef rt;
  return f(*rt);
}

// `limit` (for `permits` within `wait`) as one GCRA step. Throws UsageError
// naming `name` (the key, or the key template) when out of range.
RateStep rate_step(std::string_view name, const RateLimit& limit, std::uint64_t permits,
                   std::chrono::milliseconds wait);
// One decision on `rt`'s store, counted in its stats and in `series`.
// Throws UsageError for a bad key or limit, the store's error (naming the
// key) when it fails.
RateDecision decide(QuotaRuntime& rt, std::string_view key, const RateLimit& limit, std::uint64_t permits,
                    std::chrono::milliseconds wait, RateSeries& series);

// Binds a store URL scheme to a rate store (mem is built in; the Redis
// schemes register when Weave::quota_redis is linked).
using RateStoreFactory = std::function<std::shared_ptr<RateStore>(const QuotaOptions&)>;
void register_rate_store(std::string scheme, RateStoreFactory factory);
// The same for semaphores.
using SemaphoreStoreFactory = std::function<std::shared_ptr<SemaphoreStore>(const QuotaOptions&)>;
void register_semaphore_store(std::string scheme, SemaphoreStoreFactory factory);

}  // namespace weave::detail
