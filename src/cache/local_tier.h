// The in-process tier of [[cache]] (docs/cache.md, "The local tier"): one per
// cache name, bounded in entries and/or bytes, sharded (a writers' lock per
// shard, none on a hit, no global lock on any path but clear() and stats()),
// evicting by W-TinyLFU.
//
// Values are opaque (std::shared_ptr<const void>): the interceptor owns what
// they are; the tier only keeps, counts and drops them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

struct LocalTierOptions {
  // At most this many entries (0 = no entry bound). At least one bound must be set.
  std::size_t max_entries = 10'000;
  // At most this many bytes, summed over LocalEntry::weight (0 = no byte bound).
  std::size_t max_bytes = 0;
  // Number of shards, rounded up to a power of two; 0 = 4 per hardware thread,
  // at most 64. Always reduced so that every shard holds at least 64 entries
  // (or 1 when the entry bound is smaller than the shard count) and, with a
  // byte bound, 64 KiB: the bounds are split evenly across shards.
  unsigned shards = 0;
  // Size of the invalidation stamp table (rounded up to a power of two): more
  // buckets, fewer false conflicts between unrelated keys (8 bytes each).
  std::size_t stamp_buckets = 4096;
};

struct LocalEntry {
  std::shared_ptr<const void> value;
  // put() never replaces an entry by one with a lower version.
  std::uint64_t version = 0;
  // From this time on the entry is a miss (and get() drops it).
  std::chrono::steady_clock::time_point expires = std::chrono::steady_clock::time_point::max();
  // What the entry costs against max_bytes (the interceptor passes the stored
  // size in bytes); ignored without a byte bound.
  std::size_t weight = 1;
  // Opaque to the tier; the cache keeps the codec that made `value` here.
  const void* kind = nullptr;
};

class LocalTier {
 public:
  explicit LocalTier(LocalTierOptions options = {});  // std::invalid_argument when no bound is set
  ~LocalTier();
  LocalTier(const LocalTier&) = delete;
  LocalTier& operator=(const LocalTier&) = delete;

  // A hit returns a copy of the entry; an expired entry is a miss and is
  // dropped. Every call, hit or miss, counts as a request of `key` for the
  // eviction policy.
  std::optional<LocalEntry> get(std::string_view key, std::chrono::steady_clock::time_point now);

  // The same, but a hit calls visit(entry) while the entry cannot be dropped,
  // so the value can be copied out without touching its shared reference
  // count (the one cache line all threads of a hot key would write). `visit`
  // must be quick and must not write to this tier (put, invalidate, clear,
  // or a get that misses): such a call from inside it throws UsageError
  // instead of waiting for itself. True on a hit.
  template <class Visit>
  bool visit(std::string_view key, std::chrono::steady_clock::time_point now, Visit&& visit) {
    return visit_entry(key, now, [](const LocalEntry& e, void* f) { (*static_cast<Visit*>(f))(e); }, &visit);
  }

  // Invalidation stamps close the fill/invalidate race: a filler takes
  // stamp(key) BEFORE it reads the value it will install (from Redis or by
  // running the method); put(key, entry, stamp) installs only if no
  // invalidate(key) (of this key or of one sharing its stamp bucket) and no
  // clear() happened since. A false conflict only skips an install.
  std::uint64_t stamp(std::string_view key) const noexcept;

  // Installs (or replaces) `key`. False when refused: a stale stamp, an
  // existing entry with a higher version, or an entry heavier than a shard's
  // byte bound (that one also drops the key's current entry, which it was
  // meant to replace). A new key enters the admission window; whether it
  // stays once it leaves the window is W-TinyLFU's decision, later.
  bool put(std::string key, LocalEntry entry, std::uint64_t stamp);

  // Drops `key` and bumps its stamp bucket (under the key's shard lock).
  void invalidate(std::string_view key);
  // Drops everything and bumps the global epoch: every stamp taken before is
  // refused. Used when the invalidation subscription drops.
  void clear();

  struct Stats {
    std::uint64_t hits = 0, misses = 0;  // hits may undercount when over 8 threads hit one shard at once
    std::uint64_t evictions = 0;           // entries removed to hold a bound (rejected candidates included)
    std::uint64_t rejected_stale = 0;      // put() refused: stamp or version
    std::uint64_t rejected_admission = 0;  // candidates refused by TinyLFU, and put() of oversized entries
    std::uint64_t expirations = 0;         // expired entries found by get() (each also a miss)
    std::size_t entries = 0, bytes = 0;    // bytes: sum of weights
  };
  // Sums the shards one after another: exact when nothing runs concurrently.
  Stats stats() const;

  // The options in effect: shards and stamp_buckets resolved.
  const LocalTierOptions& options() const noexcept { return options_; }

 private:

 public:
  struct Shard;  // src/cache/local_tier.cpp

 private:
  bool visit_entry(std::string_view key, std::chrono::steady_clock::time_point now,
                   void (*visit)(const LocalEntry&, void*), void* context);
  Shard& shard_of(std::uint64_t hash) const noexcept;
  std::atomic<std::uint64_t>& bucket_of(std::uint64_t hash) const noexcept;
  std::uint64_t stamp_of(std::uint64_t hash) const noexcept;

  LocalTierOptions options_;
  std::size_t shard_mask_ = 0;  // shards: a power of two
  std::unique_ptr<Shard[]> shards_;
  std::size_t bucket_mask_ = 0;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;
  alignas(64) std::atomic<std::uint64_t> epoch_{0};
};

// ttl shortened by 0 to 10 %, by a fraction fixed per key (from its hash), so
// keys filled together do not expire together, while a key's own expiry stays
// predictable. Non-positive ttls are returned unchanged.
std::chrono::milliseconds jittered(std::chrono::milliseconds ttl, std::string_view key) noexcept;

}  // namespace weave::detail
