// weave_rate_limit_* and weave_semaphore_*: rate limit decisions and
// semaphore permits per key template, for weave::write_metrics().
#include <string>

#include "quota/quota_runtime.h"

namespace WEAVE_NAMESPACE::detail {

RateSeries& rate_series(std::string_view key_template) { return named_series<RateSeries>(key_template); }
SemaphoreSeries& semaphore_series(std::string_view key_template) {
  return named_series<SemaphoreSeries>(key_template);
}

namespace {

void write_rate_limit_metrics(MetricsWriter& w) {
  using S = QuotaCounterStripe;
  static constexpr CounterDoc<S> counters[] = {
      {&S::admitted, "weave_rate_limit_admitted_total", "Calls admitted (at once or at their turn)."},
      {&S::waited, "weave_rate_limit_waited_total", "Admitted calls that waited for their turn."},
      {&S::limited, "weave_rate_limit_limited_total", "Calls refused over the rate (RateLimited, or skipped)."},
      {&S::errors, "weave_rate_limit_errors_total",
       "Decisions the store failed (thrown, or let through by on_store_error=allow)."},
  };
  for_each_named_series<RateSeries>([&](const std::string& key_template, const RateSeries& s) {
    const MetricLabels labels = {{"rate_limit", key_template}};
    write_counters(w, labels, s.counts, counters);
    w.histogram("weave_rate_limit_wait_seconds", "Time an admitted call waited for its turn.", labels,
                s.wait.snapshot());
  });
}

void write_semaphore_metrics(MetricsWriter& w) {
  using S = QuotaCounterStripe;
  static constexpr CounterDoc<S> counters[] = {
      {&S::permits_acquired, "weave_semaphore_acquired_total", "Permits granted (at once or after a wait in line)."},
      {&S::permits_waited, "weave_semaphore_waited_total", "Granted permits that waited in line first."},
      {&S::permits_busy, "weave_semaphore_busy_total", "Requests no permit came to within their wait."},
      {&S::permits_released, "weave_semaphore_released_total", "Permits given back (lost ones included)."},
      {&S::permits_lost, "weave_semaphore_lost_total", "Permits lost while held (ran out, or dropped by the store)."},
      {&S::permits_reclaimed, "weave_semaphore_reclaimed_total",
       "Permits of dead holders (their lease run out) taken back by this process's requests."},
      {&S::permit_errors, "weave_semaphore_errors_total", "Requests and releases the store failed."},
  };
  for_each_named_series<SemaphoreSeries>([&](const std::string& key_template, const SemaphoreSeries& s) {
    const MetricLabels labels = {{"semaphore", key_template}};
    write_counters(w, labels, s.counts, counters);
    const double held = static_cast<double>(s.counts.sum(&S::permits_acquired)) -
                        static_cast<double>(s.counts.sum(&S::permits_released));
    w.gauge("weave_semaphore_held", "Permits this process holds now (granted, not yet given back).", labels, held);
    w.histogram("weave_semaphore_wait_seconds", "Time a granted request waited for its permit.", labels,
                s.wait.snapshot());
  });
}

[[maybe_unused]] const bool quota_metrics_registered = [] {
  register_metrics_source(write_rate_limit_metrics);
  register_metrics_source(write_semaphore_metrics);
  return true;
}();

}  // namespace
}  // namespace weave::detail
