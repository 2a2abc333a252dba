// What a feature needs to export its counts (weave/metrics.h): duration
// histograms a call can feed in a few nanoseconds, series per bounded name
// (a key template, a cache or queue name) that live as long as the process,
// and the one writer of Prometheus' text format. A feature registers a
// source once; write_metrics() asks every source in turn.
//
//   struct alignas(64) Counts { std::atomic<std::uint64_t> ran{0}; };
//   struct Series { StripedCounters<Counts> counts; DurationHistogram wait; };
//   Series& s = named_series<Series>("order:<id>");   // at prepare(), not per call
//   s.counts.add(&Counts::ran);  s.wait.observe(waited);
//   register_metrics_source([](MetricsWriter& w) {
//     for_each_named_series<Series>([&](const std::string& name, const Series& s) {
//       w.counter("weave_x_ran_total", "Calls that ran.", {{"x", name}}, s.counts.sum(&Counts::ran));
//       w.histogram("weave_x_wait_seconds", "Time waited.", {{"x", name}}, s.wait.snapshot());
//     });
//   });
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/process.h"
#include "core/striped.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// Upper bounds of every Weave histogram's buckets (Prometheus `le`), from a
// local lock hand-off to a slow load or a late queue message.
inline constexpr std::array<std::int64_t, 19> kBucketBoundsNs = {
    50'000,        100'000,       250'000,        500'000,        1'000'000,      2'500'000,     5'000'000,
    10'000'000,    25'000'000,    50'000'000,     100'000'000,    250'000'000,    500'000'000,   1'000'000'000,
    2'500'000'000, 5'000'000'000, 10'000'000'000, 30'000'000'000, 60'000'000'000};

// Counts per bucket (not cumulative; the last is +Inf) and the sum.
struct HistogramSnapshot {
  std::array<std::uint64_t, kBucketBoundsNs.size() + 1> counts{};
  std::uint64_t sum_ns = 0;
  std::uint64_t count() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t c : counts) n += c;
    return n;
  }
};

// Durations by bucket, each thread in a stripe of its own: observe() is a
// few compares and two plain stores (StripedCounters).
class DurationHistogram {
 public:
  void observe(std::chrono::nanoseconds d) noexcept {
    const std::int64_t ns = d.count() < 0 ? 0 : d.count();
    std::size_t i = 0;
    while (i < kBucketBoundsNs.size() && ns > kBucketBoundsNs[i]) ++i;  // most observations stop at once
    const unsigned slot = thread_slot();
    Stripe& s = stripes_.of(slot);
    Stripes::add_to(s.counts[i], 1, slot);
    Stripes::add_to(s.sum_ns, static_cast<std::uint64_t>(ns), slot);
  }
  HistogramSnapshot snapshot() const noexcept;

 private:
  struct alignas(64) Stripe {
    std::array<std::atomic<std::uint64_t>, kBucketBoundsNs.size() + 1> counts{};
    std::atomic<std::uint64_t> sum_ns{0};
  };
  using Stripes = StripedCounters<Stripe>;
  Stripes stripes_;
};

using MetricLabels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// Collects samples by family and writes them in the text exposition format
// (version 0.0.4): one HELP and TYPE per family, families sorted by name,
// label values escaped. Sample names: counters end in `_total`, durations
// are histograms in seconds.
class MetricsWriter {
 public:
  void counter(std::string_view name, std::string_view help, MetricLabels labels, double value);
  void gauge(std::string_view name, std::string_view help, MetricLabels labels, double value);
  void histogram(std::string_view name, std::string_view help, MetricLabels labels, const HistogramSnapshot& h);
  void write(std::ostream& out) const;

 private:
  struct Family {
    std::string help, type;
    std::vector<std::string> lines;
  };
  Family& family(std::string_view name, std::string_view help, std::string_view type);
  std::map<std::string, Family, std::less<>> families_;
};

// One counter of a striped series and how it is exported.
template <class Stripe>
struct CounterDoc {
  std::atomic<std::uint64_t> Stripe::*field;
  const char* name;  // ends in _total
  const char* help;
};
// Writes each documented counter of `counts` with `labels`.
template <class Stripe, std::size_t N>
void write_counters(MetricsWriter& w, MetricLabels labels, const StripedCounters<Stripe>& counts,
                    const CounterDoc<Stripe> (&docs)[N]) {
  for (const CounterDoc<Stripe>& d : docs) w.counter(d.name, d.help, labels, static_cast<double>(counts.sum(d.field)));
}

// Adds a source write_metrics() calls (a feature's, when its library is
// linked). Sources must not throw for lack of data; they may do I/O (the
// queue reads its counts from the store).
void register_metrics_source(std::function<void(MetricsWriter&)> source);

// The series of type T named `name`: made on first use, never freed (its
// address stays valid; names are bounded: templates and names from code).
// Takes a lock: resolve once (when a chain is prepared), not per call.
template <class T>
struct NamedSeries {
  Mutex mutex;
  std::map<std::string, std::unique_ptr<T>, std::less<>> by_name WEAVE_GUARDED_BY(mutex);
};
template <class T>
T& named_series(std::string_view name) {
  NamedSeries<T>& all = fork_guarded<NamedSeries<T>>();
  Guard lock(all.mutex);
  auto it = all.by_name.find(name);
  if (it == all.by_name.end()) it = all.by_name.emplace(std::string(name), std::make_unique<T>()).first;
  return *it->second;
}
template <class T, class F>
void for_each_named_series(F&& f) {
  NamedSeries<T>& all = fork_guarded<NamedSeries<T>>();
  Guard lock(all.mutex);
  for (const auto& [name, series] : all.by_name) f(name, static_cast<const T&>(*series));
}

}  // namespace weave::detail
