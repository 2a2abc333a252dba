#include "cache/cache_runtime.h"

#include <algorithm>
#include <utility>

#include "core/events.h"
#include "core/option_check.h"
#include "core/recycled.h"
#include "core/renewer.h"

#include "weave/duration.h"
#include "weave/error.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE {

void CacheOptions::validate() const {
  const detail::OptionCheck check("CacheOptions");
  if (local_max_entries == 0 && local_max_bytes == 0)
    check.fail("local_max_entries", "0 with local_max_bytes 0 leaves the local tier unbounded; set one of them");
  check.store_settings(url, connect_timeout, command_timeout, pool_size, key_prefix);
  check.duration("feed_lag", feed_lag);
  check.duration("fill_guard", fill_guard);
  check.duration("fill_lease", fill_lease);
  detail::check_cache_scheme(url);  // an unknown scheme fails here, not at the first call
}

namespace detail {
namespace {

StoreSchemes<RemoteTierFactory>& schemes() { return feature_schemes<RemoteTierFactory>("cache"); }

std::shared_ptr<RemoteTier> make_remote(const CacheOptions& o) {
  return schemes().open(o, make_mem_remote);
}

std::atomic<std::uint64_t> next_runtime_id{1};

}  // namespace

CacheRuntimeSlot& cache_runtime_slot() { return never_freed<CacheRuntimeSlot>(); }

void check_cache_scheme(const std::string& url) { schemes().check(url); }

void register_cache_remote(std::string scheme, RemoteTierFactory factory) {
  schemes().add(std::move(scheme), std::move(factory));
}

std::pair<std::shared_ptr<Flight>, bool> CacheName::join(const std::string& key) {
  Guard lock(flights_mutex_);
  auto [it, inserted] = flights_.try_emplace(key);
  if (inserted) it->second = std::make_shared<Flight>();
  return {it->second, inserted};
}

void CacheName::land(const std::string& key, const std::shared_ptr<Flight>& flight,
                     std::shared_ptr<const void> value, const ResultCodec* codec, std::uint64_t stamp,
                     std::chrono::steady_clock::time_point read_at, std::string json) {
  {
    Guard lock(flights_mutex_);
    auto it = flights_.find(key);
    if (it != flights_.end() && it->second == flight) flights_.erase(it);
  }
  {
    Guard lock(flight->mutex);
    flight->value = std::move(value);
    flight->codec = codec;
    flight->json = std::move(json);
    flight->stamp = stamp;
    flight->read_at = read_at;
    flight->done = true;
    flight->done_wakes.fire();
  }
  flight->done_cv.notify_all();
}

void Flight::wait_done() {
  Guard lock(mutex);
  mutex.wait(done_cv, [this]() WEAVE_REQUIRES(mutex) { return done; });
}

void Flight::wake_when_done(const void* waiter, std::function<void()> wake) {
  bool armed;
  {
    Guard lock(mutex);
    armed = done_wakes.arm(waiter, wake, /*changed=*/done);
  }
  if (!armed) wake();
}

CacheRuntime::CacheRuntime(CacheOptions options)
    : options_(std::move(options)), id_(next_runtime_id.fetch_add(1)) {
  options_.validate();
  remote_ = make_remote(options_);
  // Invalidations from other processes drop local copies; a feed that went
  // down may have missed some, so every local tier starts over.
  remote_->listen(RemoteTier::Listener{
      [this](std::string_view name, const std::string_view* key) {
        if (const std::shared_ptr<CacheName> c = find(name)) {
          c->counters().add(&CacheCounterStripe::invalidations_received);
          if (key) c->local().invalidate(*key);
          else c->local().clear();
        }
      },
      [this](bool down) {
        {
          Guard lock(names_mutex_);
          for (auto& [n, c] : names_) c->local().clear();
        }
        if (down) {  // (once per outage; the store's `reconnected` tells when it is back)
          feed_gaps_.fetch_add(1, std::memory_order_relaxed);
          emit_notice(options_.on_event, EventKind::feed_gap, "cache", "",
                      "the invalidation feed is down: every local copy was dropped, and local tiers are bypassed "
                      "until it is back");
        }
      }});
}

std::shared_ptr<CacheName> CacheRuntime::find(std::string_view name) {
  Guard lock(names_mutex_);
  auto it = names_.find(std::string(name));
  return it == names_.end() ? nullptr : it->second;
}

CacheNameRef CacheRuntime::name(std::string_view name, std::string_view label) {
  // A thread's last few names; a rendered one is held here too (so it is
  // not dropped while this thread keeps using it).
  struct Recent {
    std::uint64_t runtime = 0;
    std::string name;
    CacheName* cache = nullptr;
    std::shared_ptr<CacheName> pin;
  };
  thread_local Recent recent[4];
  thread_local unsigned next = 0;
  for (const Recent& r : recent) {
    if (r.runtime != id_ || r.name != name) continue;
    if (!r.pin) return {r.cache, nullptr};
    if (!r.cache->used_.load(std::memory_order_relaxed)) r.cache->used_.store(true, std::memory_order_relaxed);
    return {r.cache, r.pin};
  }
  std::shared_ptr<CacheName> found = name_locked(name, label);
  CacheName* cache = found.get();
  if (!cache->reclaimable()) found.reset();  // the runtime keeps it
  recent[next++ % 4] = Recent{id_, std::string(name), cache, found};
  return {cache, std::move(found)};
}

std::shared_ptr<CacheName> CacheRuntime::name_locked(std::string_view name, std::string_view label) {
  Guard lock(names_mutex_);
  auto it = names_.find(std::string(name));
  if (it != names_.end()) {
    it->second->used_.store(true, std::memory_order_relaxed);
    return it->second;
  }
  LocalTierOptions local;
  local.max_entries = options_.local_max_entries;
  local.max_bytes = options_.local_max_bytes;
  auto made = std::make_shared<CacheName>(std::string(name), std::string(label.empty() ? name : label), local);
  if (made->reclaimable() && ++rendered_names_ > sweep_at_) sweep_locked();
  return names_.emplace(std::string(name), std::move(made)).first->second;
}

// Drops each rendered name that nothing holds (the map's is the only
// reference: no call, no thread's recent names, no background reload) and
// that no call used since the last sweep; its counts go to its label's.
// Under names_mutex_, a count of 1 stays 1: every other reference is copied
// from one that exists, or taken from the map under this mutex.
void CacheRuntime::sweep_locked() {
  for (auto it = names_.begin(); it != names_.end();) {
    CacheName& c = *it->second;
    if (!c.reclaimable() || it->second.use_count() > 1 || c.used_.exchange(false, std::memory_order_relaxed)) {
      ++it;
      continue;
    }
    CacheStats counts = c.stats();
    counts.local_entries = counts.local_bytes = 0;  // gauges: its local tier goes with it
    auto& [stats_sum, loads_sum] = retired_[c.label()];
    add_counts(stats_sum, counts);
    add_counts(loads_sum, c.load_times().snapshot());
    it = names_.erase(it);
    --rendered_names_;
  }
  sweep_at_ = std::max(kRenderedNamesKept, 2 * rendered_names_);
}

std::size_t CacheRuntime::name_count() {
  Guard lock(names_mutex_);
  return names_.size();
}

CacheStats CacheName::stats() {
  const CacheCounters& k = counters_;
  using S = CacheCounterStripe;
  using T = CacheStats;
  static constexpr std::pair<std::uint64_t T::*, std::atomic<std::uint64_t> S::*> fields[] = {
      {&T::local_hits, &S::local_hits}, {&T::local_misses, &S::local_misses}, {&T::remote_hits, &S::remote_hits},
      {&T::remote_misses, &S::remote_misses}, {&T::loads, &S::loads}, {&T::load_failures, &S::load_failures},
      {&T::shared_loads, &S::shared_loads}, {&T::invalidations_sent, &S::invalidations_sent},
      {&T::invalidation_messages, &S::invalidation_messages}, {&T::invalidations_received, &S::invalidations_received},
      {&T::errors, &S::errors}, {&T::decode_failures, &S::decode_failures}, {&T::sync_waits, &S::sync_waits},
      {&T::refreshes, &S::refreshes}};
  CacheStats s;
  for (const auto& [out, in] : fields) s.*out = k.sum(in);
  s.load_time = std::chrono::nanoseconds(k.sum(&S::load_ns));
  const LocalTier::Stats local = local_.stats();
  s.refused_stale = local.rejected_stale;
  s.evictions = local.evictions;
  s.local_entries = local.entries;
  s.local_bytes = local.bytes;
  return s;
}

CacheStats CacheRuntime::stats(std::string_view name) {
  const std::shared_ptr<CacheName> c = find(name);
  return c ? c->stats() : CacheStats{};
}

void add_counts(CacheStats& to, const CacheStats& s) {
  for (auto field : {&CacheStats::local_hits, &CacheStats::local_misses, &CacheStats::remote_hits,
                     &CacheStats::remote_misses, &CacheStats::loads, &CacheStats::load_failures,
                     &CacheStats::shared_loads, &CacheStats::evictions, &CacheStats::invalidations_sent,
                     &CacheStats::invalidation_messages, &CacheStats::invalidations_received, &CacheStats::errors,
                     &CacheStats::decode_failures, &CacheStats::refused_stale, &CacheStats::sync_waits,
                     &CacheStats::refreshes, &CacheStats::local_entries, &CacheStats::local_bytes})
    to.*field += s.*field;
  to.load_time += s.load_time;
}

void add_counts(HistogramSnapshot& to, const HistogramSnapshot& s) {
  for (std::size_t i = 0; i < to.counts.size(); ++i) to.counts[i] += s.counts[i];
  to.sum_ns += s.sum_ns;
}

void CacheRuntime::evict(CacheName& cache, const std::string_view* key, bool shared) {
  if (key) cache.local().invalidate(*key);
  else cache.local().clear();
  if (!shared) return;
  const bool sent = remote_->evict(cache.name(), key);
  cache.counters().add(&CacheCounterStripe::invalidations_sent);
  if (sent) cache.counters().add(&CacheCounterStripe::invalidation_messages);
}

void CacheRuntime::report(CacheName& cache, std::string_view key, const std::exception& error) noexcept {
  cache.counters().add(&CacheCounterStripe::errors);
  report_event(options_.on_event, EventKind::cache_error, "cache", cache.name() + "/" + std::string(key), error,
               "cache '" + cache.name() + "' key '" + std::string(key) + "'");
}

std::shared_ptr<CacheLease> CacheRuntime::hold_lease(const CacheName& cache, std::string_view key,
                                                     const std::string& token,
                                                     std::chrono::steady_clock::time_point sent) {
  auto lease = std::allocate_shared<CacheLease>(Recycled<CacheLease>{}, cache.name(), [&](LeaseCore::Terms& terms) {
    terms.key = key;
    terms.owner = token;
    terms.lease_time = options_.fill_lease;
    terms.renew_every = LeaseCore::renew_interval(options_.fill_lease);
    terms.acquired_at = sent;
    terms.group = shared_from_this();
  });
  lease->start_deadline(sent, remote_->in_process());
  Renewer::instance().watch(*lease, lease, /*fresh=*/true);
  return lease;
}

void CacheRuntime::renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const {
  std::vector<RemoteTier::LeaseRenewal> items;
  items.reserve(leases.size());
  for (LeaseCore* core : leases) {
    const CacheLease& l = static_cast<const CacheLease&>(*core);
    items.push_back({l.name_, l.terms().key, l.terms().owner, l.terms().lease_time});
  }
  owned = remote_->renew(items);
}

// The group of a cache lease is the runtime that made it (hold_lease), which
// the lease keeps alive.
const CacheRuntime& CacheLease::runtime() const noexcept { return static_cast<const CacheRuntime&>(*terms().group); }

void CacheLease::report_lost() noexcept {
  try {
    report_to(runtime().options().on_event, "cache", *this,
              "the load of cache '" + name_ + "' runs on without its lease: another caller may load the key too");
  } catch (...) {
    // Out of memory for the words: nobody is told.
  }
}

std::shared_ptr<CacheRuntime> cache_runtime() { return cache_runtime_slot().get(); }

namespace {
// (Here, beside the slot every cache call uses, so a static link keeps it.)
[[maybe_unused]] const bool cache_metrics_registered = [] {
  register_metrics_source([](MetricsWriter& w) {
    if (const auto rt = cache_runtime_slot().made()) rt->write_metrics(w);
  });
  return true;
}();
}  // namespace

}  // namespace detail

void configure_cache(CacheOptions options) {
  options.validate();
  detail::cache_runtime_slot().configure(std::move(options));
}

CacheStats cache_stats(std::string_view name) { return detail::cache_runtime()->stats(name); }

void cache_evict(std::string_view name, std::optional<std::string_view> key) {
  const auto rt = detail::cache_runtime();
  rt->evict(*rt->name(name), key ? &*key : nullptr, /*shared=*/true);
}

std::uint64_t cache_stored_keys(std::string_view name) { return detail::cache_runtime()->remote().stored_keys(name); }

}  // namespace weave
