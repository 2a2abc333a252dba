#include "quota/quota_runtime.h"

#include <utility>

#include "core/option_check.h"

namespace WEAVE_NAMESPACE {

namespace detail {
namespace {
StoreSchemes<RateStoreFactory>& schemes() { return feature_schemes<RateStoreFactory>("quota"); }
StoreSchemes<SemaphoreStoreFactory>& semaphore_schemes() { return feature_schemes<SemaphoreStoreFactory>("quota"); }
}  // namespace

QuotaRuntimeSlot& quota_runtime_slot() { return never_freed<QuotaRuntimeSlot>(); }

void register_rate_store(std::string scheme, RateStoreFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

void register_semaphore_store(std::string scheme, SemaphoreStoreFactory factory) {
  semaphore_schemes().add(std::move(scheme), std::move(factory));
}

QuotaRuntime::QuotaRuntime(QuotaOptions options) : options_(std::move(options)) {
  options_.validate();
  rates_ = schemes().open(options_, make_mem_rates);
  semaphores_ = semaphore_schemes().open(options_, make_mem_semaphores);
}

QuotaStats QuotaRuntime::stats() const {
  using S = QuotaCounterStripe;
  QuotaStats s;
  s.admitted = counters_.sum(&S::admitted);
  s.waited = counters_.sum(&S::waited);
  s.limited = counters_.sum(&S::limited);
  s.errors = counters_.sum(&S::errors);
  s.permits_acquired = counters_.sum(&S::permits_acquired);
  s.permits_waited = counters_.sum(&S::permits_waited);
  s.permits_busy = counters_.sum(&S::permits_busy);
  s.permits_released = counters_.sum(&S::permits_released);
  s.permits_lost = counters_.sum(&S::permits_lost);
  s.permits_reclaimed = counters_.sum(&S::permits_reclaimed);
  s.permit_errors = counters_.sum(&S::permit_errors);
  return s;
}

}  // namespace detail

void QuotaOptions::validate() const {
  const detail::OptionCheck check("QuotaOptions");
  check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
  if (max_key_bytes == 0) check.fail("max_key_bytes", "must be positive");
  check.duration("permit_lease", permit_lease, std::chrono::milliseconds(30));
  check.duration("line_place", line_place, std::chrono::milliseconds(30));
  detail::schemes().check(url);  // an unknown scheme fails here, not at the first call
}

void configure_quota(QuotaOptions options) {
  options.validate();
  detail::quota_runtime_slot().configure(std::move(options));
}

QuotaStats quota_stats() { return detail::quota_runtime_slot().get()->stats(); }

}  // namespace weave
