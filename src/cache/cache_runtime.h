// The process-wide state of [[cache]]: the options, the shared tier for the
// URL, and per cache name its local tier, single-flight table and counters.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/local_tier.h"
#include "core/feature_runtime.h"
#include "core/key_hash.h"
#include "core/lease_core.h"
#include "core/metrics.h"
#include "core/striped.h"
#include "core/wake_list.h"
#include "cache/remote_tier.h"
#include "weave/cache.h"
#include "weave/held_lease.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE::detail {

// One stripe of a name's CacheStats counters, on a cache line of its own.
struct alignas(64) CacheCounterStripe {
  std::atomic<std::uint64_t> local_hits{0}, local_misses{0}, remote_hits{0}, remote_misses{0}, loads{0},
      load_failures{0}, load_ns{0}, shared_loads{0}, invalidations_sent{0}, invalidation_messages{0},
      invalidations_received{0}, errors{0}, decode_failures{0}, sync_waits{0}, refreshes{0};
};

// A name's counters, one stripe per thread (summed by stats()).
using CacheCounters = StripedCounters<CacheCounterStripe>;

// One load in flight for a key (in this process): later misses of the key
// wait for it instead of running the method again.
struct Flight {
  Mutex mutex;
  std::condition_variable done_cv;
  WakeList done_wakes WEAVE_GUARDED_BY(mutex);  // of waiters that hold no thread (wake_when_done)
  bool done WEAVE_GUARDED_BY(mutex) = false;
  // Null: the load failed (waiters load themselves).
  std::shared_ptr<const void> value WEAVE_GUARDED_BY(mutex);
  const ResultCodec* codec WEAVE_GUARDED_BY(mutex) = nullptr;  // made `value`
  std::string json WEAVE_GUARDED_BY(mutex);  // without `value`: the stored value to decode ("" none)
  // The local tier's stamp of the key taken before the leader read what it
  // landed: a waiter that finds another stamp now must not take the value
  // (an invalidation came in meanwhile; the value may predate its write).
  std::uint64_t stamp WEAVE_GUARDED_BY(mutex) = 0;
  std::chrono::steady_clock::time_point read_at WEAVE_GUARDED_BY(mutex){};  // when that stamp was taken

  // Blocks until the leader landed.
  void wait_done();
  // Runs `waiter`'s `wake` once the leader landed (at once, on this
  // thread, if it has).
  void wake_when_done(const void* waiter, std::function<void()> wake);
};

class CacheName : public std::enable_shared_from_this<CacheName> {
 public:
  // `label`: what its metrics are labelled with (the name= template that
  // rendered it, so that a cache per tenant adds no label values).
  CacheName(std::string name, std::string label, const LocalTierOptions& local)
      : name_(std::move(name)), label_(std::move(label)), local_(local) {}
  const std::string& name() const noexcept { return name_; }
  const std::string& label() const noexcept { return label_; }
  // Rendered from a name= template: its state goes when idle (CacheRuntime).
  bool reclaimable() const noexcept { return name_ != label_; }
  LocalTier& local() noexcept { return local_; }
  CacheCounters& counters() noexcept { return counters_; }
  CacheStats stats();  // its counters and its local tier's
  DurationHistogram& load_times() noexcept { return load_times_; }  // loads that returned

  // The flight for `key`: {flight, true} when the caller leads it (must call
  // land()), {flight, false} when another caller does.
  std::pair<std::shared_ptr<Flight>, bool> join(const std::string& key);
  void land(const std::string& key, const std::shared_ptr<Flight>& flight, std::shared_ptr<const void> value,
            const ResultCodec* codec, std::uint64_t stamp, std::chrono::steady_clock::time_point read_at,
            std::string json = {});

 private:
  std::string name_, label_;
  LocalTier local_;
  CacheCounters counters_;
  DurationHistogram load_times_;
  Mutex flights_mutex_;
  KeyMap<std::shared_ptr<Flight>> flights_ WEAVE_GUARDED_BY(flights_mutex_);
  friend class CacheRuntime;
  std::atomic<bool> used_ = true;  // since the runtime's last sweep
};

// A cache name as a call holds it. A literal name lives as long as its
// runtime; a name rendered from a name= template (a cache per tenant) is
// dropped once idle, so a handle to one keeps it (a shared count, paid only
// by such names) until the call, or its background reload, is done.
class CacheNameRef {
 public:
  CacheNameRef(CacheName* name, std::shared_ptr<CacheName> pin) noexcept : name_(name), pin_(std::move(pin)) {}
  CacheName& operator*() const noexcept { return *name_; }
  CacheName* operator->() const noexcept { return name_; }

 private:
  CacheName* name_;
  std::shared_ptr<CacheName> pin_;  // set for a reclaimable name
};

// Sums counts (a label's names, for metrics).
void add_counts(CacheStats& to, const CacheStats& s);
void add_counts(HistogramSnapshot& to, const HistogramSnapshot& s);

class CacheRuntime;

// A fill lease (sync=true) or refresh claim (refresh_after) held while its
// caller loads: a core lease the Renewer extends every third of fill_lease,
// so a load slower than fill_lease keeps it and no second loader starts. Its
// loss (the store found it gone) costs nothing but that: the fill is still
// refused if the key was written meanwhile. Made by CacheRuntime::hold_lease.
class CacheLease final : public LeaseCore, public HeldLease {
 public:
  template <class Fill>
  CacheLease(std::string cache, Fill&& fill)
      : LeaseCore(std::forward<Fill>(fill)), HeldLease(static_cast<LeaseCore&>(*this)), name_(std::move(cache)) {}
  using LeaseCore::expires_at;
  using LeaseCore::stop_token;
  std::string name_;  // the cache's

 private:
  const CacheRuntime& runtime() const noexcept;
  void report_lost() noexcept override;  // on_event: lease_lost
};

class CacheRuntime final : public RenewGroup, public std::enable_shared_from_this<CacheRuntime> {
 public:
  explicit CacheRuntime(CacheOptions options);
  const CacheOptions& options() const noexcept { return options_; }
  RemoteTier& remote() noexcept { return *remote_; }
  // Made on first use. A literal name lives as long as the runtime; one
  // rendered from a template (`label` is the template; "": the name is
  // literal) is dropped with its counts folded into its label's, once no
  // handle holds it and no call used it between two sweeps; a sweep runs
  // when making a name finds twice as many rendered names as the last sweep
  // left (at least kRenderedNamesKept). A hit on this thread's last few
  // names takes no lock.
  CacheNameRef name(std::string_view name, std::string_view label = {});
  static constexpr std::size_t kRenderedNamesKept = 256;
  // How many names hold state now (literal and rendered).
  std::size_t name_count();
  CacheStats stats(std::string_view name);
  // weave_cache_* of every name this runtime served (cache_metrics.cpp).
  void write_metrics(MetricsWriter& w);
  // Drops `key` (every key when null) from this process's local tier and,
  // with `shared`, from the shared tier (whose feed tells the other
  // processes); counted. Throws the shared tier's errors.
  void evict(CacheName& cache, const std::string_view* key, bool shared);
  // Counts the error, reports it to on_event; never throws.
  void report(CacheName& cache, std::string_view key, const std::exception& error) noexcept;
  // The fill lease or refresh claim `token` took on `key` (the claim was
  // sent at `sent`), renewed until its drop_hold().
  std::shared_ptr<CacheLease> hold_lease(const CacheName& cache, std::string_view key, const std::string& token,
                                         std::chrono::steady_clock::time_point sent);

 private:
  void renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const override;
  std::string_view feature() const noexcept override { return "cache"; }
  const EventHook& event_hook() const noexcept override { return options_.on_event; }
  std::shared_ptr<const RenewGroup> owning_ref() const override { return shared_from_this(); }
  std::shared_ptr<CacheName> find(std::string_view name);
  std::shared_ptr<CacheName> name_locked(std::string_view name, std::string_view label);
  void sweep_locked() WEAVE_REQUIRES(names_mutex_);
  CacheOptions options_;
  const std::uint64_t id_;  // unique per runtime in the process (thread caches key on it)
  Mutex names_mutex_;
  std::unordered_map<std::string, std::shared_ptr<CacheName>> names_ WEAVE_GUARDED_BY(names_mutex_);
  std::size_t rendered_names_ WEAVE_GUARDED_BY(names_mutex_) = 0;
  std::size_t sweep_at_ WEAVE_GUARDED_BY(names_mutex_) = kRenderedNamesKept;
  // The counts of dropped rendered names, by label (metrics stay monotonic).
  std::unordered_map<std::string, std::pair<CacheStats, HistogramSnapshot>> retired_ WEAVE_GUARDED_BY(names_mutex_);
  std::atomic<std::uint64_t> feed_gaps_{0};  // outages of the invalidation feed
  std::shared_ptr<RemoteTier> remote_;  // last: its feed stops before the names go
};

// The process-wide runtime (configure_cache, else the defaults): a call
// takes it with `CacheRuntimeRef rt;` (no lock, no shared count), anything
// else with cache_runtime() (a shared reference).
using CacheRuntimeSlot = RuntimeSlot<CacheRuntime, CacheOptions>;
CacheRuntimeSlot& cache_runtime_slot();
std::shared_ptr<CacheRuntime> cache_runtime();

class CacheRuntimeRef : public CacheRuntimeSlot::Ref {
 public:
  CacheRuntimeRef() : CacheRuntimeSlot::Ref(cache_runtime_slot()) {}
};

// Binds a store URL scheme to a shared tier (mem is built in; the Redis
// schemes register when their library is linked).
using RemoteTierFactory = std::function<std::shared_ptr<RemoteTier>(const CacheOptions&)>;
void register_cache_remote(std::string scheme, RemoteTierFactory factory);

// Throws ConfigError when `url` names a scheme no linked library serves.
void check_cache_scheme(const std::string& url);

}  // namespace weave::detail
