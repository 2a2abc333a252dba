// The metrics machinery (core/metrics.h): the text format the writer
// produces, the histogram's buckets, per-name series, and weave_events_total.
// (check_metrics.py reads a whole workload's output with a real parser.)
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/events.h"
#include "core/metrics.h"
#include "weave/event.h"
#include "weave/metrics.h"

namespace {

using namespace std::chrono_literals;
using weave::detail::DurationHistogram;
using weave::detail::MetricsWriter;

std::string written(const MetricsWriter& w) {
  std::ostringstream out;
  w.write(out);
  return out.str();
}

}  // namespace

TEST_CASE("metrics: a family has one HELP and TYPE line and its samples, families sorted by name") {
  MetricsWriter w;
  w.gauge("weave_z", "Last.", {}, 2);
  w.counter("weave_a_total", "Counts things.", {{"name", "x"}}, 3);
  w.counter("weave_a_total", "Counts things.", {{"name", "y"}}, 4);
  CHECK(written(w) ==
        "# HELP weave_a_total Counts things.\n"
        "# TYPE weave_a_total counter\n"
        "weave_a_total{name=\"x\"} 3\n"
        "weave_a_total{name=\"y\"} 4\n"
        "# HELP weave_z Last.\n"
        "# TYPE weave_z gauge\n"
        "weave_z 2\n");
}

TEST_CASE("metrics: label values and help text are escaped") {
  MetricsWriter w;
  w.gauge("weave_g", "Help with \\ and\nnewline.", {{"key", "a\"b\\c\nd"}}, 1);
  CHECK(written(w) ==
        "# HELP weave_g Help with \\\\ and\\nnewline.\n"
        "# TYPE weave_g gauge\n"
        "weave_g{key=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST_CASE("metrics: a histogram's buckets are cumulative, in seconds, bounds inclusive, ending in +Inf") {
  DurationHistogram h;
  h.observe(0ns);
  h.observe(50us);   // on the first bound: counted in it (le is "less or equal")
  h.observe(51us);   // the second bucket
  h.observe(2s);     // le=2.5
  h.observe(61s);    // over the last bound: +Inf only
  h.observe(-5ms);   // a clock step backwards counts as 0
  const auto snap = h.snapshot();
  CHECK(snap.count() == 6);
  CHECK(snap.sum_ns == 50'000 + 51'000 + 2'000'000'000LL + 61'000'000'000LL);
  MetricsWriter w;
  w.histogram("weave_h_seconds", "Durations.", {{"lock", "k"}}, snap);
  const std::string text = written(w);
  CHECK(text.find("weave_h_seconds_bucket{lock=\"k\",le=\"0.00005\"} 3\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_bucket{lock=\"k\",le=\"0.0001\"} 4\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_bucket{lock=\"k\",le=\"1\"} 4\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_bucket{lock=\"k\",le=\"2.5\"} 5\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_bucket{lock=\"k\",le=\"60\"} 5\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_bucket{lock=\"k\",le=\"+Inf\"} 6\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_sum{lock=\"k\"} 63.000101\n") != std::string::npos);
  CHECK(text.find("weave_h_seconds_count{lock=\"k\"} 6\n") != std::string::npos);
  CHECK(text.find("# TYPE weave_h_seconds histogram\n") != std::string::npos);
}

TEST_CASE("metrics: observations from many threads all count") {
  DurationHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 20; ++t)  // more threads than stripes of their own: the last is shared
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) h.observe(1ms);
    });
  for (auto& t : threads) t.join();
  const auto snap = h.snapshot();
  CHECK(snap.count() == 20'000);
  CHECK(snap.counts[4] == 20'000);  // le=0.001
  CHECK(snap.sum_ns == 20'000ULL * 1'000'000);
}

TEST_CASE("metrics: a named series is made once and keeps its address") {
  struct Series {
    DurationHistogram h;
  };
  Series& a = weave::detail::named_series<Series>("acct:<id>");
  Series& b = weave::detail::named_series<Series>("acct:<id>");
  Series& c = weave::detail::named_series<Series>("other");
  CHECK(&a == &b);
  CHECK(&a != &c);
  std::vector<std::string> names;
  weave::detail::for_each_named_series<Series>([&](const std::string& n, const Series&) { names.push_back(n); });
  CHECK(names == std::vector<std::string>{"acct:<id>", "other"});
}

TEST_CASE("metrics: every event counts in weave_events_total, whoever handles it") {
  auto value = [] {
    const std::string text = weave::metrics_text();
    const std::string sample = "weave_events_total{feature=\"metrics-test\",kind=\"reconnected\"} ";
    const auto at = text.find(sample);
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + sample.size()));
  };
  CHECK(value() == -1);  // no such feature yet: no series
  int heard = 0;
  const weave::EventHook own = [&](const weave::Event&) { ++heard; };
  weave::detail::emit_notice(own, weave::EventKind::reconnected, "metrics-test", "127.0.0.1:1", "back");
  weave::detail::emit_notice(own, weave::EventKind::reconnected, "metrics-test", "127.0.0.1:1", "back");
  CHECK(heard == 2);
  CHECK(value() == 2);
  CHECK(weave::metrics_text().find("weave_events_total{feature=\"metrics-test\",kind=\"lease_lost\"} 0\n") !=
        std::string::npos);
}
