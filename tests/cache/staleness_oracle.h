// The staleness oracle of [[cache]] (docs/cache.md "Measured"):
// reads the operation logs of cache_worker processes and reports every read
// that returned a value older than a write that had completed before the read
// started, with how long before.
//
// Log lines (cache_worker `oracle`), times in CLOCK_MONOTONIC ns, which every
// process on one host shares:
//   R <key> <seq> <invoked> <completed>   a read that returned value <seq> (-1: none)
//   W <key> <seq> <invoked> <completed>   a write of value <seq>
// Each key has one writing process, which writes 1, 2, 3, ... in turn (one
// write at a time), over an initial value 0 written before the run: so the
// writes of a key are totally ordered and value s is superseded by write s+1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cache_oracle {

struct Op {
  char kind = 'R';  // 'R' or 'W'
  std::string key;
  long seq = 0;
  std::int64_t invoked = 0, completed = 0;
  int process = 0;
};

// Appends the operations of one log (process `process`) to `out`. Throws
// std::runtime_error naming the file and line on a malformed line.
void read_log(const std::string& path, int process, std::vector<Op>& out);

struct StaleRead {
  Op read;
  long latest = 0;              // the newest value whose write had completed before the read started
  std::int64_t stale_ns = 0;    // read.invoked - completion of the write that superseded the value read
};

struct Report {
  std::int64_t d_ns = 0;        // the bound D the report was made for
  std::size_t reads = 0, writes = 0;
  std::vector<StaleRead> stale; // every stale read, in log order
  // Reads that cannot be explained by any order: a value never written, or
  // one whose write began only after the read had returned.
  std::vector<Op> impossible;
  std::int64_t last_write_completed = 0;
  // Stale reads that began after the last write had completed and D had passed.
  std::size_t stale_after_quiesce = 0;

  std::size_t stale_beyond(std::int64_t ns) const;  // stale by more than ns
  std::int64_t longest_ns() const;
  // Counts, longest, percentiles of the stale windows and a histogram
  // (<= 1, 2, 5, 10, 25, 50, 100, 250, 1000 ms, more), plus the worst reads.
  std::string text(std::size_t worst = 5) const;
};

Report check(const std::vector<Op>& ops, std::int64_t d_ns);

}  // namespace cache_oracle
