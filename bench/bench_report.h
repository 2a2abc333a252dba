// What the Google Benchmark drivers share: a reporter that shows every run as
// usual and keeps its figures, so a driver can print ratios against the
// baselines of the same run; and a percentile of measured samples.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace bench {

class RunCollector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      Figures& f = figures_[r.benchmark_name()];
      f = {r.real_accumulated_time * 1e9 / double(r.iterations), {}};
      for (const auto& [name, c] : r.counters) f.counters[name] = double(c);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Real ns per iteration of the benchmark `name` (0 when it did not run).
  double ns(const std::string& name) const {
    auto it = figures_.find(name);
    return it == figures_.end() ? 0 : it->second.ns;
  }
  // Its items_per_second counter (0 when it did not run or set none).
  double per_second(const std::string& name) const { return counter(name, "items_per_second"); }
  // Its counter `counter` (0 when it did not run or set none).
  double counter(const std::string& name, const std::string& counter) const {
    auto it = figures_.find(name);
    if (it == figures_.end()) return 0;
    auto c = it->second.counters.find(counter);
    return c == it->second.counters.end() ? 0 : c->second;
  }

 private:
  struct Figures {
    double ns = 0;
    std::map<std::string, double> counters;
  };
  std::map<std::string, Figures> figures_;
};

// The p-quantile (0..1) of `samples`, nearest rank below; 0 for none.
inline double percentile(std::vector<double> samples, double p) {
  std::sort(samples.begin(), samples.end());
  return samples.empty()
             ? 0
             : samples[std::min(samples.size() - 1, static_cast<std::size_t>(p * double(samples.size())))];
}

}  // namespace bench
