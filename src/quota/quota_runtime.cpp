#include "quota/quota_runtime.h"

#include <utility>

#include "core/option_check.h"

namespace WEAVE_NAMESPACE {

namespace detail {
namespace {
StoreSchemes<RateStoreFactory>& schemes() { return feature_schemes<RateStoreFactory>("quota"); }
}  // namespace

QuotaRuntimeSlot& quota_runtime_slot() { return never_freed<QuotaRuntimeSlot>(); }

void register_rate_store(std::string scheme, RateStoreFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

QuotaRuntime::QuotaRuntime(QuotaOptions options) : options_(std::move(options)) {
  options_.validate();
  rates_ = schemes().open(options_, make_mem_rates);
}

QuotaStats QuotaRuntime::stats() const {
  using S = QuotaCounterStripe;
  QuotaStats s;
  s.admitted = counters_.sum(&S::admitted);
  s.waited = counters_.sum(&S::waited);
  s.limited = counters_.sum(&S::limited);
  s.errors = counters_.sum(&S::errors);
  return s;
}

}  // namespace detail

void QuotaOptions::validate() const {
  const detail::OptionCheck check("QuotaOptions");
  check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
  if (max_key_bytes == 0) check.fail("max_key_bytes", "must be positive");
  detail::schemes().check(url);  // an unknown scheme fails here, not at the first call
}

void configure_quota(QuotaOptions options) {
  options.validate();
  detail::quota_runtime_slot().configure(std::move(options));
}

QuotaStats quota_stats() { return detail::quota_runtime_slot().get()->stats(); }

}  // namespace weave
