// A count-min sketch of 4-bit counters: how often a key was requested lately,
// for the TinyLFU admission of the local tier (src/cache/local_tier.cpp).
//
// One table of 64-bit words, each holding 16 four-bit counters. A key reads
// and writes one counter in each of 4 rows: row i picks a word from its own
// hash of the key and, inside the word, one of the 4 nibbles reserved for row
// i (nibbles 4i..4i+3). The estimate is the minimum of the 4 counters (an
// over-estimate only, by collisions); increments are conservative (only the
// counters equal to that minimum grow), which keeps the over-estimate small.
// Counters saturate at 15. After sample_size() increments every counter is
// halved, so old popularity fades and a key that was hot an hour ago does not
// hold its place forever.
//
// Not thread-safe: the local tier keeps one per shard, under the shard's mutex.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// splitmix64's finalizer: spreads a hash so that its bits can be used apart.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

class FrequencySketch {
 public:
  static constexpr unsigned k_max_count = 15;

  // Sized for about `expected_entries` distinct resident keys: as many words
  // (16 counters each), rounded up to a power of two; halves every 10 × that
  // many increments.
  explicit FrequencySketch(std::size_t expected_entries = 16) { resize(expected_entries); }

  // Grows (and forgets every count) when `expected_entries` outgrew the table;
  // never shrinks. Cheap when nothing changes.
  void ensure_capacity(std::size_t expected_entries) {
    if (expected_entries > table_.size() && table_.size() < k_max_words) resize(expected_entries);
  }

  unsigned frequency(std::uint64_t hash) const noexcept {
    unsigned f = k_max_count;
    for (unsigned row = 0; row < 4; ++row) f = std::min(f, count_at(slot(hash, row)));
    return f;
  }

  void increment(std::uint64_t hash) noexcept {
    Slot s[4];
    unsigned low = k_max_count;
    for (unsigned row = 0; row < 4; ++row) {
      s[row] = slot(hash, row);
      low = std::min(low, count_at(s[row]));
    }
    if (low == k_max_count) return;
    for (const Slot& x : s)
      if (count_at(x) == low) table_[x.word] += std::uint64_t{1} << x.shift;
    if (++additions_ >= sample_size_) halve();
  }

  std::size_t sample_size() const noexcept { return sample_size_; }
  std::size_t width() const noexcept { return table_.size(); }

 private:
  static constexpr std::size_t k_max_words = std::size_t{1} << 24;  // 128 MiB: far beyond any shard
  static constexpr std::uint64_t k_row_seed[4] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL,
                                                  0x165667b19e3779f9ULL, 0xd6e8feb86659fd93ULL};
  struct Slot {
    std::size_t word;
    unsigned shift;
  };

  Slot slot(std::uint64_t hash, unsigned row) const noexcept {
    const std::uint64_t h = mix64(hash + k_row_seed[row]);
    // Low bits pick the word, the top 2 bits the nibble among the row's 4.
    const unsigned nibble = (row << 2) | static_cast<unsigned>(h >> 62);
    return {static_cast<std::size_t>(h & mask_), nibble << 2};
  }
  unsigned count_at(Slot s) const noexcept { return static_cast<unsigned>((table_[s.word] >> s.shift) & 0xf); }

  void resize(std::size_t expected_entries) {
    const std::size_t words = std::bit_ceil(std::clamp<std::size_t>(expected_entries, 8, k_max_words));
    table_.assign(words, 0);
    mask_ = words - 1;
    sample_size_ = 10 * std::max<std::size_t>(expected_entries, 8);
    additions_ = 0;
  }

  void halve() noexcept {
    for (std::uint64_t& w : table_) w = (w >> 1) & 0x7777777777777777ULL;
    additions_ /= 2;
  }

  std::vector<std::uint64_t> table_;
  std::uint64_t mask_ = 0;
  std::size_t sample_size_ = 0;
  std::size_t additions_ = 0;
};

}  // namespace weave::detail
