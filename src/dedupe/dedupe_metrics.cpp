// weave_dedupe_*: the duplicate guard's counts per key template, for
// weave::write_metrics().
#include <string>

#include "dedupe/dedupe_runtime.h"

namespace WEAVE_NAMESPACE::detail {

DedupeSeries& dedupe_series(std::string_view key_template) { return named_series<DedupeSeries>(key_template); }

namespace {

void write_dedupe_metrics(MetricsWriter& w) {
  using S = DedupeCounterStripe;
  static constexpr CounterDoc<S> counters[] = {
      {&S::first_calls, "weave_dedupe_first_calls_total", "Calls that claimed their key and ran."},
      {&S::duplicates, "weave_dedupe_duplicates_total", "Calls answered as duplicates without running."},
      {&S::replays, "weave_dedupe_replays_total", "Duplicates answered with the first call's stored result."},
      {&S::waited, "weave_dedupe_waited_total", "Duplicates that waited for a running first call."},
      {&S::in_flight_refused, "weave_dedupe_in_flight_refused_total",
       "Duplicates refused while the first call still ran (DuplicateInFlight)."},
      {&S::mismatches, "weave_dedupe_mismatches_total", "Calls whose key was used with other arguments (DedupeMismatch)."},
      {&S::forgotten, "weave_dedupe_forgotten_total", "Failed first calls that left no record (on_error=forget)."},
      {&S::remembered, "weave_dedupe_remembered_total", "Failed first calls recorded (on_error=remember)."},
      {&S::claims_lost, "weave_dedupe_claims_lost_total",
       "First calls whose claim ran out while they ran: outcome not recorded."},
      {&S::errors, "weave_dedupe_errors_total", "Store failures recording an outcome (each also a dedupe_error event)."},
  };
  for_each_named_series<DedupeSeries>([&](const std::string& key_template, const DedupeSeries& s) {
    const MetricLabels labels = {{"dedupe", key_template}};
    write_counters(w, labels, s.counts, counters);
    w.histogram("weave_dedupe_wait_seconds", "Time a duplicate waited for the running first call.", labels,
                s.wait.snapshot());
  });
}

[[maybe_unused]] const bool dedupe_metrics_registered = [] {
  register_metrics_source(write_dedupe_metrics);
  return true;
}();

}  // namespace
}  // namespace weave::detail
