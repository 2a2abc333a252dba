// weave_schedule_*: each schedule's runs, the ticks not run, the misses this
// process counted into the store, and how late runs started, for
// weave::write_metrics().
#include "schedule/schedule_metrics.h"

namespace WEAVE_NAMESPACE::detail {

ScheduleSeries& schedule_series(std::string_view name) { return named_series<ScheduleSeries>(name); }

namespace {

void write_series(MetricsWriter& w) {
  using C = ScheduleCountStripe;
  static constexpr CounterDoc<C> counters[] = {
      {&C::ran, "weave_schedule_runs_total", "Runs that returned (each attempt of a tick counts)."},
      {&C::failed, "weave_schedule_failed_total", "Runs that threw: failed attempts, tried again or dead."},
      {&C::not_run, "weave_schedule_not_run_total",
       "Ticks taken but not run: found late, misfire or overlap chose another."},
      {&C::missed, "weave_schedule_missed_total",
       "Ticks counted missed in the store by this process's offers (every process's add up to the store's count)."},
  };
  for_each_named_series<ScheduleSeries>([&](const std::string& name, const ScheduleSeries& s) {
    const MetricLabels labels = {{"schedule", name}};
    write_counters(w, labels, s.counts, counters);
    w.histogram("weave_schedule_lateness_seconds",
                "Time from a tick's time to the start of its first attempt (the store's clock).", labels,
                s.lateness.snapshot());
  });
}

[[maybe_unused]] const bool schedule_metrics_registered = [] {
  register_metrics_source(write_series);
  return true;
}();

}  // namespace
}  // namespace weave::detail
