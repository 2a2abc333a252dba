// weave/cache.h — [[cache]], [[cache_put]], [[cache_evict]]: a two-level
// cache of method results, in-process in front of the store (docs/cache.md).
//
//   [[cache(name="product", key="<id>", ttl=30min, local_ttl=5min)]]
//   virtual std::optional<Product> find(const std::string& id);   // read-through
//   [[cache_put(name="product", key="<p.id>")]]
//   virtual Product save(const Product& p);                       // write, then cache the result
//   [[cache_evict(name="product", key="<id>")]]
//   virtual void remove(const std::string& id);                   // write, then evict
//
//   weave::configure_cache({.url = "mem://", .local_max_entries = 50'000});  // optional
//   weave::CacheStats s = weave::cache_stats("product");
//
// Results are stored as JSON (weave/json_codec.h). A call never fails
// because of the cache: store errors are counted, sent to on_event, and the
// method runs (on_error=throw in the annotation opts out).
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "weave/event.h"

namespace WEAVE_NAMESPACE {

struct WEAVE_API CacheOptions {
  // Its section in the configuration file and its environment variables
  // prefix (WEAVE_CACHE_<FIELD>): weave/config.h.
  static constexpr std::string_view config_section = "cache";
  // The store (weave::load_options() puts WEAVE_CACHE_URL, WEAVE_URL or the
  // file's url here: the one place that decides; this struct is taken as given).
  std::string url = "mem://";
  // The in-process tier's bounds, per cache name (0 bytes = no byte bound).
  std::size_t local_max_entries = 10'000;
  std::size_t local_max_bytes = 0;
  // Networked stores.
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
  // Prepended to every stored key: "{<prefix><name>:<key>}".
  std::string key_prefix = "weave:cache:";
  // Redis: how long an evicted key keeps its version (a tombstone), so a load
  // that read it before the eviction cannot install its older value. A load
  // slower than this (or than the ttl of a value written meanwhile) could.
  std::chrono::milliseconds fill_guard{60'000};
  // sync=true and refresh_after: how long one caller's claim to load a key
  // for the deployment lasts. A loader that crashed blocks the others at most
  // this long (then one of them loads); a load slower than this may run
  // twice. A sync miss waits at most fill_guard in all, then loads itself.
  std::chrono::milliseconds fill_lease{5'000};
  // Redis: a local copy is served only while the invalidation feed has been
  // confirmed within this long (a PING on the subscription, sent every
  // feed_lag / 2, answered after every invalidation published before it). A
  // process paused (SIGSTOP, a VM stall) or a server frozen longer than this
  // bypasses the local tier until a confirmation is fresh again; a value can
  // be served stale by at most this much (the staleness bound D,
  // docs/cache.md). On a loaded machine a late reader only costs local hits,
  // never correctness.
  std::chrono::milliseconds feed_lag{10};
  // Told of every cache_error, feed_gap, lost fill lease and failed renewal
  // (weave/event.h); must be quick and not throw. Empty: the process's
  // handler (weave::set_event_handler, by default a line on stderr).
  EventHook on_event = {};

  // Throws weave::ConfigError naming the field for a value out of range.
  void validate() const;
};

// Per cache name, since the process started (or the cache was configured).
struct WEAVE_API CacheStats {
  std::uint64_t local_hits = 0, local_misses = 0;
  std::uint64_t remote_hits = 0, remote_misses = 0;
  std::uint64_t loads = 0;                 // the method ran to fill a miss
  std::uint64_t load_failures = 0;         // ... and threw
  std::chrono::nanoseconds load_time{0};   // summed over loads
  std::uint64_t shared_loads = 0;          // misses answered by another caller's load (single flight)
  std::uint64_t evictions = 0;             // local entries dropped to hold the bounds
  std::uint64_t invalidations_sent = 0;    // cache_put / cache_evict broadcasts (one per key)
  std::uint64_t invalidation_messages = 0; // ... the PUBLISHes this process sent for them (a batch is one)
  std::uint64_t invalidations_received = 0;
  std::uint64_t errors = 0;                // store or serialization failures (each also an Event)
  std::uint64_t decode_failures = 0;       // stored values that no longer fit the type: a miss, overwritten
  std::uint64_t refused_stale = 0;         // local fills refused because an invalidation came first
  std::uint64_t sync_waits = 0;            // sync=true misses that waited for another process's load
  std::uint64_t refreshes = 0;             // refresh_after reloads this process ran (also in loads)
  std::uint64_t local_entries = 0, local_bytes = 0;  // in the local tier now (bytes: under local_max_bytes)
};

// Replaces the process-wide cache configuration (local tiers start empty).
// Throws ConfigError.
WEAVE_API void configure_cache(CacheOptions options);
// Zeros for a name never used.
WEAVE_API CacheStats cache_stats(std::string_view name);

// For operators (`weave cache evict`): what [[cache_evict]] does, from any
// process: drops `key` (every key of `name` when none) from the shared tier
// and, through the invalidation feed, from every process's local tier.
WEAVE_API void cache_evict(std::string_view name, std::optional<std::string_view> key = std::nullopt);
// For operators (`weave cache stats`): the keys of cache `name` in the
// shared tier now (one SCAN of every master; an evicted key's tombstone
// counts until it runs out).
WEAVE_API std::uint64_t cache_stored_keys(std::string_view name);

}  // namespace weave
