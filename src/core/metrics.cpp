// The Prometheus text format writer and the list of metric sources.
#include "core/metrics.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "weave/metrics.h"

namespace WEAVE_NAMESPACE {
namespace detail {
namespace {

struct Sources {
  Mutex mutex;
  std::vector<std::function<void(MetricsWriter&)>> all WEAVE_GUARDED_BY(mutex);
};

// A label value or HELP text with `\`, newline (and in label values `"`) escaped.
void escape(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out += c;
  }
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  // Fixed notation, shortest round trip: "0.0001", not "1e-04" (both parse; this reads better).
  char buf[400];  // the longest fixed double
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

std::string sample(std::string_view name, MetricLabels labels, std::string_view extra_label,
                   std::string_view extra_value, double value) {
  std::string line(name);
  if (labels.size() != 0 || !extra_label.empty()) {
    line += '{';
    bool first = true;
    auto add = [&](std::string_view k, std::string_view v) {
      if (!first) line += ',';
      first = false;
      line += k;
      line += "=\"";
      escape(line, v, true);
      line += '"';
    };
    for (const auto& [k, v] : labels) add(k, v);
    if (!extra_label.empty()) add(extra_label, extra_value);
    line += '}';
  }
  line += ' ';
  line += number(value);
  return line;
}

}  // namespace

HistogramSnapshot DurationHistogram::snapshot() const noexcept {
  HistogramSnapshot h;
  stripes_.for_each([&](const Stripe& s) {
    for (std::size_t i = 0; i < h.counts.size(); ++i) h.counts[i] += s.counts[i].load(std::memory_order_relaxed);
    h.sum_ns += s.sum_ns.load(std::memory_order_relaxed);
  });
  return h;
}

MetricsWriter::Family& MetricsWriter::family(std::string_view name, std::string_view help, std::string_view type) {
  auto it = families_.find(name);
  if (it == families_.end()) it = families_.emplace(std::string(name), Family{std::string(help), std::string(type), {}}).first;
  return it->second;
}

void MetricsWriter::counter(std::string_view name, std::string_view help, MetricLabels labels, double value) {
  family(name, help, "counter").lines.push_back(sample(name, labels, {}, {}, value));
}

void MetricsWriter::gauge(std::string_view name, std::string_view help, MetricLabels labels, double value) {
  family(name, help, "gauge").lines.push_back(sample(name, labels, {}, {}, value));
}

void MetricsWriter::histogram(std::string_view name, std::string_view help, MetricLabels labels,
                              const HistogramSnapshot& h) {
  Family& f = family(name, help, "histogram");
  const std::string base(name);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    const std::string le = i < kBucketBoundsNs.size() ? number(static_cast<double>(kBucketBoundsNs[i]) / 1e9) : "+Inf";
    f.lines.push_back(sample(base + "_bucket", labels, "le", le, static_cast<double>(cumulative)));
  }
  f.lines.push_back(sample(base + "_sum", labels, {}, {}, static_cast<double>(h.sum_ns) / 1e9));
  f.lines.push_back(sample(base + "_count", labels, {}, {}, static_cast<double>(cumulative)));
}

void MetricsWriter::write(std::ostream& out) const {
  for (const auto& [name, f] : families_) {
    std::string help;
    escape(help, f.help, false);
    // (A counter's HELP and TYPE carry its sample name, `_total` included,
    // as the Go client writes them: every 0.0.4 parser reads that.)
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << f.type << '\n';
    for (const std::string& line : f.lines) out << line << '\n';
  }
}

void register_metrics_source(std::function<void(MetricsWriter&)> source) {
  Sources& s = fork_guarded<Sources>();
  Guard lock(s.mutex);
  s.all.push_back(std::move(source));
}

}  // namespace detail

void write_metrics(std::ostream& out) {
  std::vector<std::function<void(detail::MetricsWriter&)>> sources;
  {
    detail::Sources& s = detail::fork_guarded<detail::Sources>();
    detail::Guard lock(s.mutex);
    sources = s.all;
  }
  detail::MetricsWriter w;
  for (const auto& source : sources) source(w);
  w.write(out);
}

std::string metrics_text() {
  std::ostringstream out;
  write_metrics(out);
  return out.str();
}

}  // namespace weave
