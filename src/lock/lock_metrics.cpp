// weave_lock_*: the lock's counts per key template, for weave::write_metrics().
#include <atomic>
#include <string>

#include "core/metrics.h"
#include "internal.h"

namespace WEAVE_NAMESPACE::detail {

LockSeries& lock_series(std::string_view key_template) { return named_series<LockSeries>(key_template); }

namespace {

void write_lock_metrics(MetricsWriter& w) {
  static constexpr CounterDoc<LockCounts> counters[] = {
      {&LockCounts::acquired, "weave_lock_acquired_total", "Leases handed out (new acquisitions)."},
      {&LockCounts::reentered, "weave_lock_reentered_total",
       "Requests served by a lease the call chain already held."},
      {&LockCounts::busy, "weave_lock_busy_total", "Requests that gave up: the lock stayed busy for all of wait."},
      {&LockCounts::errors, "weave_lock_errors_total", "Requests that failed with an error (store, usage)."},
      {&LockCounts::lost, "weave_lock_lost_total",
       "Leases lost while held: expired, taken, not renewed in time, or past max_hold."},
      {&LockCounts::release_failures, "weave_lock_release_failures_total",
       "Releases the store failed; the lease ran out by itself."},
      {&LockCounts::renewals, "weave_lock_renewals_total", "Lease extensions by the watchdog."},
  };
  for_each_named_series<LockSeries>([&](const std::string& key_template, const LockSeries& s) {
    const MetricLabels labels = {{"lock", key_template}};
    write_counters(w, labels, s.counts, counters);
    // Every release is one hold time: the histogram counts the releases. Read
    // first, it is never more than the acquisitions read after it.
    const HistogramSnapshot holds = s.hold.snapshot();
    const std::uint64_t released = holds.count();
    w.counter("weave_lock_released_total", "Leases given back (their last hold dropped).", labels,
              static_cast<double>(released));
    const std::uint64_t acquired = s.counts.sum(&LockCounts::acquired);
    w.gauge("weave_lock_held", "Leases held now (acquired, not yet released).", labels,
            static_cast<double>(acquired > released ? acquired - released : 0));  // (relaxed counts: never below 0)
    w.histogram("weave_lock_wait_seconds", "Time a lock request took, waiting included, however it ended.", labels,
                s.wait.snapshot());
    w.histogram("weave_lock_hold_seconds", "Time from acquisition to release of a lease.", labels, holds);
  });
}

[[maybe_unused]] const bool lock_metrics_registered = [] {
  register_metrics_source(write_lock_metrics);
  return true;
}();

}  // namespace
}  // namespace weave::detail
