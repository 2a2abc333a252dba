// weave/metrics.h — every count and timing Weave keeps, for Prometheus.
//
// One call writes them in the Prometheus text exposition format (0.0.4),
// ready to serve from your /metrics endpoint:
//
//   std::ostringstream out;
//   weave::write_metrics(out);
//   http_reply(200, "text/plain; version=0.0.4", out.str());
//
// Families (docs/operations.md lists each with its labels):
//   weave_lock_*    per key template (`lock="acct:<id>"`; "" for LockClient calls)
//   weave_cache_*   per cache name, hits and misses per tier
//   weave_dedupe_*  per key template
//   weave_queue_*   per queue name; weave_queue_messages reads the store
//   weave_circuit_* per circuit breaker name
//   weave_bulkhead_* per bulkhead name
//   weave_events_total per feature and event kind
// Labels are names from code, never a rendered key, so series stay few.
// Counters count since the process started; durations are histograms in
// seconds. Thread-safe; queue counts cost one store request per queue.
#pragma once

#include "weave/abi.h"

#include <iosfwd>
#include <string>

namespace WEAVE_NAMESPACE {

WEAVE_API void write_metrics(std::ostream& out);
// The same text as a string.
WEAVE_API std::string metrics_text();

}  // namespace weave
