// The built-in `cache` interceptor (docs/cache.md, "One read"): the local
// hit, then one load per key in this process (single flight), whose leader
// reads through (read_through.h). cache_put and cache_evict: put_evict.cpp.
// Every store failure fails open: counted, reported, and the call goes on.
#include <mutex>
#include <string>

#include "cache/read_through.h"
#include "core/builtin.h"
#include "core/feature_config.h"

namespace WEAVE_NAMESPACE {
namespace detail::cache {
namespace {

// Completes a call with what the leader of its flight landed: its value, or
// the stored JSON (an aged value another caller is refreshing).
bool complete_from_flight(Invocation& inv, const ResultCodec& mine, const Flight& flight)
    WEAVE_REQUIRES(flight.mutex) {
  if (flight.value) return complete_with(inv, mine, *flight.codec, flight.value.get());
  if (flight.json.empty()) return false;
  try {
    inv.complete_from_json(flight.json);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

bool complete_from_local(Invocation& inv, const Settings& s, const ResultCodec& codec, CacheRuntime& rt,
                         CacheName& cache, std::string_view key, Clock::time_point now, bool count_miss) {
  if (s.tier == Tier::remote || !rt.remote().live(now)) return false;
  // A value of this method's type is copied into the result inside the read
  // (no reference count written); another type is converted after.
  bool done = false;
  std::shared_ptr<const void> other;
  const ResultCodec* other_codec = nullptr;
  const bool found = cache.local().visit(key, now, [&](const LocalEntry& e) {
    const auto* made_by = static_cast<const ResultCodec*>(e.kind);
    if (codec.same_type(*made_by)) {
      inv.complete_from_shared(e.value.get());
      done = true;
    } else {
      other = e.value;
      other_codec = made_by;
    }
  });
  if (found && (done || complete_with(inv, codec, *other_codec, other.get()))) {
    cache.counters().add(&Counts::local_hits);
    return true;
  }
  if (count_miss) cache.counters().add(&Counts::local_misses);
  return false;
}

AfterFlight after_flight(Invocation& inv, const ResultCodec& codec, CacheRuntime& rt, CacheName& cache,
                         std::string_view key, Flight& flight, Clock::time_point began, int attempt) {
  Guard lock(flight.mutex);
  const bool failed = !flight.value && flight.json.empty();
  // A leader that read before this call began may have read before a write
  // that completed before it, and been slow since: its value is taken only
  // if no invalidation of the key came in since its read and the feed is
  // confirmed (every write completed more than feed_lag ago has been
  // applied), as for a local hit. Else read again.
  const bool superseded =
      flight.read_at < began && (flight.stamp != cache.local().stamp(key) || !rt.remote().live(Clock::now()));
  if (!failed && !superseded && complete_from_flight(inv, codec, flight)) {
    cache.counters().add(&Counts::shared_loads);
    return AfterFlight::taken;
  }
  // The leader's load failed (or writes keep coming): this caller loads for itself.
  return failed || attempt == 2 ? AfterFlight::load_self : AfterFlight::join_again;
}

namespace {

class CacheInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    const Settings& s = settings_of(inv);
    const ResultCodec& codec = codec_of(inv);
    const CacheRuntimeRef rt;
    const CacheNameRef held = cache_of(*rt, inv, s);
    CacheName& cache = *held;
    std::string key_storage;
    const std::string_view key = key_of(inv, s, key_storage);

    // 1. the local tier, only while the invalidation feed is complete
    const auto now = Clock::now();
    if (complete_from_local(inv, s, codec, *rt, cache, key, now, /*count_miss=*/true)) return;

    // 2. one load per key in this process; the others wait for its value
    for (int attempt = 0;; ++attempt) {
      auto [flight, leader] = cache.join(std::string(key));
      if (leader) {
        ReadThrough(inv, s, codec, *rt, cache, key, std::move(flight)).run();
        return;
      }
      flight->wait_done();
      switch (after_flight(inv, codec, *rt, cache, key, *flight, now, attempt)) {
        case AfterFlight::taken: return;
        case AfterFlight::load_self: inv.proceed(); return;
        case AfterFlight::join_again: break;
      }
    }
  }
};

}  // namespace
}  // namespace detail::cache

// Registers the cache interceptors with Weave::core when this library is
// linked: its static targets name weave_link_cache (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_cache = 0;

namespace {
[[maybe_unused]] const bool cache_registered = [] {
  detail::register_builtin_interceptor("cache", [] { return std::shared_ptr<Interceptor>(std::make_shared<detail::cache::CacheInterceptor>()); });
  detail::register_builtin_interceptor("cache_put", &detail::cache::make_put_interceptor);
  detail::register_builtin_interceptor("cache_evict", &detail::cache::make_evict_interceptor);
  using detail::option;
  using O = CacheOptions;
  detail::register_feature_config(detail::describe(detail::with_store_options<O>({
                                                       option("local_max_entries", &O::local_max_entries),
                                                       option("local_max_bytes", &O::local_max_bytes),
                                                       option("feed_lag", &O::feed_lag),
                                                       option("fill_guard", &O::fill_guard),
                                                       option("fill_lease", &O::fill_lease),
                                                   }),
                                                   &configure_cache));
  return true;
}();
}  // namespace

}  // namespace weave
