// weave_rate_limit_*: rate limit decisions per key template, for
// weave::write_metrics().
#include <string>

#include "quota/quota_runtime.h"

namespace WEAVE_NAMESPACE::detail {

RateSeries& rate_series(std::string_view key_template) { return named_series<RateSeries>(key_template); }

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

[[maybe_unused]] const bool rate_limit_metrics_registered = [] {
  register_metrics_source(write_rate_limit_metrics);
  return true;
}();

}  // namespace
}  // namespace weave::detail
