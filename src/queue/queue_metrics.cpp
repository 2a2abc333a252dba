// weave_queue_*: each queue's counts, lateness and processing times, and
// its messages per state read from the store, for weave::write_metrics().
#include <string>
#include <vector>

#include "queue/queue_runtime.h"

namespace WEAVE_NAMESPACE::detail {

QueueSeries& queue_series(std::string_view name) { return named_series<QueueSeries>(name); }

namespace {

void write_series(MetricsWriter& w) {
  using C = QueueCountStripe;
  static constexpr CounterDoc<C> counters[] = {
      {&C::offered, "weave_queue_offered_total", "Messages offered and added."},
      {&C::offered_existing, "weave_queue_offered_existing_total",
       "Offers whose message id was queued already (left as it was)."},
      {&C::delivered, "weave_queue_delivered_total", "Deliveries: messages taken by this process."},
      {&C::redelivered, "weave_queue_redelivered_total", "Deliveries of a message delivered before."},
      {&C::acked, "weave_queue_acked_total", "Deliveries acknowledged."},
      {&C::retried, "weave_queue_retried_total", "Deliveries settled with retry(delay)."},
      {&C::failed, "weave_queue_failed_total", "Deliveries settled as failed attempts (fail(), a dropped delivery)."},
      {&C::dead_lettered, "weave_queue_dead_lettered_total",
       "Messages dead-lettered by this process (retries spent, dead(), a stalled last attempt)."},
      {&C::leases_lost, "weave_queue_leases_lost_total",
       "Deliveries whose lease was lost while held (the queue takes them back)."},
  };
  for_each_named_series<QueueSeries>([&](const std::string& name, const QueueSeries& s) {
    const MetricLabels labels = {{"queue", name}};
    write_counters(w, labels, s.counts, counters);
    w.histogram("weave_queue_lateness_seconds", "Time from a message's due time to its delivery (the store's clock).",
                labels, s.lateness.snapshot());
    w.histogram("weave_queue_processing_seconds", "Time from a delivery to its settle.", labels,
                s.processing.snapshot());
  });
}

}  // namespace

void QueueRuntime::write_metrics(MetricsWriter& w) {
  std::vector<std::shared_ptr<QueueState>> queues;
  {
    Guard g(mutex_);
    for (const auto& [name, q] : queues_) queues.push_back(q);
  }
  for (const auto& q : queues) {
    bool up = true;
    QueueCounts c;
    try {
      c = q->counts();
    } catch (...) {
      up = false;  // the store's error is the reader's to see elsewhere; the scrape goes on
    }
    w.gauge("weave_queue_store_up", "1 when the queue's counts were read from its store in this scrape, else 0.",
            {{"queue", q->name}}, up ? 1 : 0);
    if (!up) continue;
    const char* help = "Messages in the queue per state, read from the store (exact, one atomic step).";
    w.gauge("weave_queue_messages", help, {{"queue", q->name}, {"state", "delayed"}}, static_cast<double>(c.delayed));
    w.gauge("weave_queue_messages", help, {{"queue", q->name}, {"state", "ready"}}, static_cast<double>(c.ready));
    w.gauge("weave_queue_messages", help, {{"queue", q->name}, {"state", "in_flight"}}, static_cast<double>(c.in_flight));
    w.gauge("weave_queue_messages", help, {{"queue", q->name}, {"state", "dead"}}, static_cast<double>(c.dead));
  }
}

namespace {
[[maybe_unused]] const bool queue_metrics_registered = [] {
  register_metrics_source([](MetricsWriter& w) {
    write_series(w);
    if (const auto rt = queue_runtime_slot().made()) rt->write_metrics(w);
  });
  return true;
}();
}  // namespace

}  // namespace weave::detail
