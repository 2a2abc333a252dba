// weave_cache_*: every cache name's counts, for weave::write_metrics(). They
// are the runtime's (CacheStats): a reconfiguration starts them at zero, which
// Prometheus' rate() and increase() read as a counter reset.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache_runtime.h"

namespace WEAVE_NAMESPACE::detail {

// One series per label: a literal name, or the name= template that rendered
// many (a cache per tenant adds no label values).
void CacheRuntime::write_metrics(MetricsWriter& w) {
  std::vector<std::shared_ptr<CacheName>> names;
  std::map<std::string, std::pair<CacheStats, HistogramSnapshot>> by_label;
  {
    Guard lock(names_mutex_);
    for (const auto& [name, c] : names_) names.push_back(c);
    for (const auto& [label, sums] : retired_) by_label[label] = sums;  // dropped names' counts
  }
  for (const auto& c : names) {
    auto& [stats_sum, loads_sum] = by_label[c->label()];
    add_counts(stats_sum, c->stats());
    add_counts(loads_sum, c->load_times().snapshot());
  }
  w.counter("weave_cache_feed_gaps_total",
            "Outages of the invalidation feed (every local copy dropped, local tiers bypassed until it is back).", {},
            static_cast<double>(feed_gaps_.load(std::memory_order_relaxed)));
  for (const auto& [name, sums] : by_label) {
    const CacheStats& s = sums.first;
    const MetricLabels labels = {{"cache", name}};
    auto count = [&](const char* family, const char* help, std::uint64_t v) {
      w.counter(family, help, labels, static_cast<double>(v));
    };
    const char* hits_help = "Lookups answered from a tier (local: this process; remote: the store).";
    const char* misses_help = "Lookups a tier could not answer.";
    w.counter("weave_cache_hits_total", hits_help, {{"cache", name}, {"tier", "local"}}, static_cast<double>(s.local_hits));
    w.counter("weave_cache_hits_total", hits_help, {{"cache", name}, {"tier", "remote"}}, static_cast<double>(s.remote_hits));
    w.counter("weave_cache_misses_total", misses_help, {{"cache", name}, {"tier", "local"}},
              static_cast<double>(s.local_misses));
    w.counter("weave_cache_misses_total", misses_help, {{"cache", name}, {"tier", "remote"}},
              static_cast<double>(s.remote_misses));
    count("weave_cache_loads_total", "Runs of the method to fill a miss (refreshes included).", s.loads);
    count("weave_cache_load_failures_total", "Loads that threw.", s.load_failures);
    count("weave_cache_shared_loads_total", "Misses answered by another caller's load (single flight).",
          s.shared_loads);
    count("weave_cache_refreshes_total", "refresh_after reloads run by this process.", s.refreshes);
    count("weave_cache_sync_waits_total", "sync=true misses that waited for another process's load.", s.sync_waits);
    count("weave_cache_evictions_total", "Local entries dropped to hold the local tier's bounds.", s.evictions);
    count("weave_cache_invalidations_sent_total", "Keys invalidated by cache_put and cache_evict calls here.",
          s.invalidations_sent);
    count("weave_cache_invalidation_messages_total", "Invalidation messages published (a batch is one).",
          s.invalidation_messages);
    count("weave_cache_invalidations_received_total", "Invalidations received from the feed.",
          s.invalidations_received);
    count("weave_cache_refused_stale_total", "Local fills refused because an invalidation came first.",
          s.refused_stale);
    count("weave_cache_errors_total", "Store or serialization failures (each also a cache_error event).", s.errors);
    count("weave_cache_decode_failures_total", "Stored values that no longer fit the type (read as misses).",
          s.decode_failures);
    w.gauge("weave_cache_local_entries", "Entries in the local tier.", labels, static_cast<double>(s.local_entries));
    w.gauge("weave_cache_local_bytes", "Weight of the local tier's entries (bytes, under local_max_bytes).", labels,
            static_cast<double>(s.local_bytes));
    w.histogram("weave_cache_load_seconds", "Time the method took to load a missing value (loads that returned).",
                labels, sums.second);
  }
}

}  // namespace weave::detail
