// The process-wide state of rate limits: options, the store for the URL,
// counters. A RateLimiter made with options of its own has one of these to
// itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/feature_runtime.h"
#include "core/striped.h"
#include "quota/rate_store.h"
#include "weave/quota.h"

namespace WEAVE_NAMESPACE::detail {

// One stripe of QuotaStats' counters, on a cache line of its own.
struct alignas(64) QuotaCounterStripe {
  std::atomic<std::uint64_t> admitted{0}, waited{0}, limited{0}, errors{0};
};

class QuotaRuntime {
 public:
  explicit QuotaRuntime(QuotaOptions options);
  const QuotaOptions& options() const noexcept { return options_; }
  RateStore& rates() noexcept { return *rates_; }
  void count(std::atomic<std::uint64_t> QuotaCounterStripe::*field) noexcept { counters_.add(field); }
  QuotaStats stats() const;

 private:
  QuotaOptions options_;
  std::shared_ptr<RateStore> rates_;
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

// Binds a store URL scheme to a rate store (mem is built in; the Redis
// schemes register when Weave::quota_redis is linked).
using RateStoreFactory = std::function<std::shared_ptr<RateStore>(const QuotaOptions&)>;
void register_rate_store(std::string scheme, RateStoreFactory factory);

}  // namespace weave::detail
