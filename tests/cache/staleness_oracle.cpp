#include "staleness_oracle.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace cache_oracle {

void read_log(const std::string& path, int process, std::vector<Op>& out) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read oracle log " + path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    std::istringstream s(line);
    Op op;
    long long invoked = 0, completed = 0;
    if (!(s >> op.kind >> op.key >> op.seq >> invoked >> completed) || (op.kind != 'R' && op.kind != 'W'))
      throw std::runtime_error(path + ":" + std::to_string(n) + ": malformed oracle log line '" + line + "'");
    op.invoked = invoked;
    op.completed = completed;
    op.process = process;
    out.push_back(std::move(op));
  }
}

std::size_t Report::stale_beyond(std::int64_t ns) const {
  return static_cast<std::size_t>(
      std::count_if(stale.begin(), stale.end(), [&](const StaleRead& r) { return r.stale_ns > ns; }));
}

std::int64_t Report::longest_ns() const {
  std::int64_t m = 0;
  for (const auto& r : stale) m = std::max(m, r.stale_ns);
  return m;
}

std::string Report::text(std::size_t worst) const {
  std::ostringstream o;
  auto ms = [](std::int64_t ns) {
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << double(ns) / 1e6 << " ms";
    return t.str();
  };
  o << "staleness oracle: " << reads << " reads, " << writes << " writes; D = " << ms(d_ns) << "\n";
  o << "  stale reads (a value older than a write completed before the read began): " << stale.size() << "\n";
  o << "  stale by more than D: " << stale_beyond(d_ns) << "; stale after writes stopped and D passed: "
    << stale_after_quiesce << "; impossible reads: " << impossible.size() << "\n";
  if (!stale.empty()) {
    std::vector<std::int64_t> w;
    for (const auto& r : stale) w.push_back(r.stale_ns);
    std::sort(w.begin(), w.end());
    auto pct = [&](double p) { return w[std::min(w.size() - 1, static_cast<std::size_t>(p * double(w.size())))]; };
    o << "  stale window: longest " << ms(w.back()) << ", p50 " << ms(pct(0.5)) << ", p90 " << ms(pct(0.9))
      << ", p99 " << ms(pct(0.99)) << "\n";
    static constexpr std::int64_t bounds_ms[] = {1, 2, 5, 10, 25, 50, 100, 250, 1000};
    std::size_t counts[std::size(bounds_ms) + 1] = {};
    for (std::int64_t ns : w) {
      std::size_t i = 0;
      while (i < std::size(bounds_ms) && ns > bounds_ms[i] * 1'000'000) ++i;
      ++counts[i];
    }
    o << "  histogram:";
    for (std::size_t i = 0; i <= std::size(bounds_ms); ++i) {
      if (i < std::size(bounds_ms)) o << " <=" << bounds_ms[i] << "ms:" << counts[i];
      else o << " >1000ms:" << counts[i];
    }
    o << "\n";
    std::vector<const StaleRead*> by(stale.size());
    for (std::size_t i = 0; i < stale.size(); ++i) by[i] = &stale[i];
    std::sort(by.begin(), by.end(), [](auto* a, auto* b) { return a->stale_ns > b->stale_ns; });
    for (std::size_t i = 0; i < std::min(worst, by.size()); ++i) {
      const StaleRead& r = *by[i];
      o << "  worst #" << i + 1 << ": process " << r.read.process << " read " << r.read.key << " = " << r.read.seq
        << " at " << r.read.invoked << " ns, " << r.latest << " had completed; stale by " << ms(r.stale_ns)
        << " (read took " << ms(r.read.completed - r.read.invoked) << ")\n";
    }
  }
  for (std::size_t i = 0; i < std::min<std::size_t>(worst, impossible.size()); ++i) {
    const Op& r = impossible[i];
    o << "  impossible: process " << r.process << " read " << r.key << " = " << r.seq << " at " << r.invoked << "\n";
  }
  return o.str();
}

Report check(const std::vector<Op>& ops, std::int64_t d_ns) {
  Report rep;
  rep.d_ns = d_ns;
  // Per key: write seq -> (invoked, completed); value 0 is the initial one.
  struct Write {
    std::int64_t invoked, completed;
  };
  std::map<std::string, std::map<long, Write>> writes;
  for (const Op& op : ops) {
    if (op.kind != 'W') continue;
    ++rep.writes;
    writes[op.key][op.seq] = {op.invoked, op.completed};
    rep.last_write_completed = std::max(rep.last_write_completed, op.completed);
  }
  for (const Op& op : ops) {
    if (op.kind != 'R') continue;
    ++rep.reads;
    const auto& w = writes[op.key];
    if (op.seq < 0) {  // none: the initial value existed before the run
      rep.impossible.push_back(op);
      continue;
    }
    if (op.seq > 0) {
      auto it = w.find(op.seq);
      if (it == w.end() || it->second.invoked > op.completed) {
        rep.impossible.push_back(op);
        continue;
      }
    }
    // The write that superseded the value read (writes of a key are sequential).
    auto next = w.find(op.seq + 1);
    if (next == w.end() || next->second.completed >= op.invoked) continue;
    StaleRead s;
    s.read = op;
    s.stale_ns = op.invoked - next->second.completed;
    s.latest = op.seq + 1;
    for (auto it = std::next(next); it != w.end() && it->second.completed < op.invoked; ++it) s.latest = it->first;
    if (op.invoked > rep.last_write_completed + d_ns) ++rep.stale_after_quiesce;
    rep.stale.push_back(std::move(s));
  }
  return rep;
}

}  // namespace cache_oracle
