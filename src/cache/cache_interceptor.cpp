// The built-in `cache`, `cache_put` and `cache_evict` interceptors
// (docs/cache.md): read-through with single flight, write-through, evict.
// Every store failure fails open: counted, reported, and the call goes on.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "cache/cache_runtime.h"
#include "core/builtin.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

enum class Tier { both, local, remote };

// What one [[cache...]] annotation says, read once per method.
struct Settings {
  std::string name;   // "" with name_slot: rendered per call
  int name_slot = -1;
  int key_slot = -1;  // the key template's slot; -1: read `key` as text per call
  milliseconds ttl{30 * 60'000};
  milliseconds local_ttl{5 * 60'000};
  milliseconds null_ttl{60'000};
  Tier tier = Tier::both;
  bool throw_errors = false;  // on_error=throw
  bool all = false;           // cache_evict(all=true)
  bool before = false;        // cache_evict(before=true)
};

Settings read_settings(const Annotation& a, std::string_view method) {
  Settings s;
  if (const ArgValue* name = a.find("name"); name && name->kind == ArgValue::Kind::key_template)
    s.name_slot = name->first;  // a name that depends on the call (per tenant, say)
  else
    s.name = a.has("name") ? std::string(a.text("name")) : std::string(method);
  if (const ArgValue* key = a.find("key"); key && key->kind == ArgValue::Kind::key_template) s.key_slot = key->first;
  if (a.has("ttl")) s.ttl = a.duration("ttl");
  if (a.has("local_ttl")) s.local_ttl = a.duration("local_ttl");
  if (a.has("null_ttl")) s.null_ttl = a.duration("null_ttl");
  if (s.local_ttl > s.ttl) s.local_ttl = s.ttl;
  if (a.has("tier")) s.tier = static_cast<Tier>(a.choice("tier", {"both", "local", "remote"}, method));
  if (a.has("on_error")) s.throw_errors = a.choice("on_error", {"report", "throw"}, method) == 1;
  if (a.has("all")) s.all = a.boolean("all");
  // Written in the vocabulary, not run yet: refused rather than ignored.
  if ((a.has("sync") && a.boolean("sync")) || a.has("refresh_after"))
    throw UsageError(std::string(a.name()) + " on " + std::string(method) +
                     ": sync=true and refresh_after are not supported by this Weave version yet");
  if (a.has("before")) s.before = a.boolean("before");
  return s;
}

// The key template rendered for this call; without key=, every argument
// rendered as a key part, joined by ':' into `storage` (a type without key
// formatting is a UsageError naming it: write key= then).
std::string_view key_of(const Invocation& inv, const Settings& s, std::string& storage) {
  const Annotation& a = inv.annotation();
  if (s.key_slot >= 0) return a.rendered(s.key_slot);
  if (a.has("key")) return a.text("key");
  for (std::size_t i = 0; i < inv.arg_count(); ++i) {
    if (i) storage += ':';
    storage += inv.arg(i).text();
  }
  return storage;
}

const ResultCodec& codec_of(const Invocation& inv) {
  const ResultCodec* codec = inv.result_codec();
  if (!codec)
    throw UsageError(std::string(inv.annotation().name()) + " on " + std::string(inv.method()) +
                     ": the method has no result codec (regenerate its proxy with this weavegen)");
  return *codec;
}

// Completes the call with a value another call made: shared as it is when
// both methods return the same type, else through JSON (a cache_put method
// returning Product feeds a cache method returning std::optional<Product>).
// False when the value does not fit this method's type (then: a miss).
bool complete_with(Invocation& inv, const ResultCodec& mine, const ResultCodec& made_by, const void* value) {
  if (mine.same_type(made_by)) {
    inv.complete_from_shared(value);
    return true;
  }
  try {
    inv.complete_from_json(made_by.encode(value));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Runs a store step; a failure is counted and reported, and thrown only
// under on_error=throw. Returns false when it failed.
template <class F>
bool guarded(detail::CacheRuntime& rt, detail::CacheName& cache, std::string_view key, const Settings& s, F&& step) {
  try {
    step();
    return true;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    rt.report(cache, key, e);
    if (s.throw_errors) throw;
    return false;
  }
}

class CacheInterceptorBase : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    try {
      return std::make_shared<Settings>(read_settings(Annotation(spec, {}), ""));
    } catch (const Error&) {
      return nullptr;  // around() reads by name and names the method
    }
  }

 protected:
  // What the annotation says for this call: prepared once per method, or read
  // by name for specs written by hand (into `by_name`).
  static const Settings& settings_of(const Invocation& inv, Settings& by_name) {
    if (const Settings* prepared = inv.prepared<Settings>()) return *prepared;
    by_name = read_settings(inv.annotation(), inv.method());
    return by_name;
  }
  static std::string_view name_of(const Invocation& inv, const Settings& s) {
    if (s.name_slot >= 0) return inv.annotation().rendered(s.name_slot);
    return s.name.empty() ? inv.method() : std::string_view(s.name);
  }
};

class CacheInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    Settings by_name;
    const Settings& s = settings_of(inv, by_name);
    const ResultCodec& codec = codec_of(inv);
    const detail::RuntimeRef rt;
    detail::CacheName& cache = rt->name(name_of(inv, s));
    detail::CacheCounters& count = cache.counters();
    std::string key_storage;
    const std::string_view key = key_of(inv, s, key_storage);
    const bool use_local = s.tier != Tier::remote;
    const bool use_remote = s.tier != Tier::local;

    // 1. the local tier, only while the invalidation feed is complete
    const auto now = Clock::now();
    if (use_local && rt->remote().live(now)) {
      auto hit = cache.local().get(key, now);
      if (hit && complete_with(inv, codec, *static_cast<const ResultCodec*>(hit->kind), hit->value.get())) {
        count.local_hits.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      count.local_misses.fetch_add(1, std::memory_order_relaxed);
    }

    // 2. one load per key in this process; the others wait for its value
    auto [flight, leader] = cache.join(std::string(key));
    if (!leader) {
      std::unique_lock lock(flight->mutex);
      flight->done_cv.wait(lock, [&] { return flight->done; });
      if (flight->value && complete_with(inv, codec, *flight->codec, flight->value.get())) {
        count.shared_loads.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      lock.unlock();
      inv.proceed();  // the leader's load failed: this caller loads for itself
      return;
    }
    struct Land {  // every way out of the leader's path wakes the waiters
      detail::CacheName& cache;
      std::string key;
      std::shared_ptr<detail::Flight> flight;
      const ResultCodec* codec;
      std::shared_ptr<const void> value;
      ~Land() { cache.land(key, flight, std::move(value), codec); }
    } land{cache, std::string(key), flight, &codec, nullptr};

    // Taken before anything is read: an invalidation from here on refuses the fill.
    const std::uint64_t stamp = cache.local().stamp(key);

    // 3. the shared tier
    std::optional<std::uint64_t> read_version;  // set when the shared tier was read
    if (use_remote) {
      detail::RemoteRead stored;
      if (guarded(*rt, cache, key, s, [&] { stored = rt->remote().get(cache.name(), key); })) {
        read_version = stored.version;
        if (stored.json) {
          try {
            inv.complete_from_json(*stored.json);
            count.remote_hits.fetch_add(1, std::memory_order_relaxed);
            land.value = codec.share(inv.result());
            install(*rt, cache, key, s, codec, land.value, stamp, stored.json->size());
            return;
          } catch (const std::exception&) {
            // Stored by another version of the type: a miss, overwritten below.
            count.decode_failures.fetch_add(1, std::memory_order_relaxed);
          }
        } else {
          count.remote_misses.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }

    // 4. the method
    const auto started = Clock::now();
    try {
      inv.proceed();
    } catch (...) {
      count.load_failures.fetch_add(1, std::memory_order_relaxed);
      throw;
    }
    count.loads.fetch_add(1, std::memory_order_relaxed);
    count.load_ns.fetch_add(static_cast<std::uint64_t>((Clock::now() - started).count()), std::memory_order_relaxed);
    const void* result = inv.result();
    land.value = codec.share(result);
    const milliseconds ttl = codec.empty(result) ? s.null_ttl : s.ttl;
    if (ttl <= milliseconds(0)) return;  // null_ttl=0ms: empty results are not kept
    // JSON: for the shared tier, and as the local entry's weight under a byte bound.
    std::string json;
    if (use_remote || rt->options().local_max_bytes > 0)
      if (!guarded(*rt, cache, key, s, [&] { json = codec.encode(result); })) return;
    if (use_remote) {
      if (!read_version) return;  // the shared tier could not be read: nothing known to fill over
      guarded(*rt, cache, key, s,
              [&] { rt->remote().fill(cache.name(), key, json, detail::jittered(ttl, key), *read_version); });
    }
    install(*rt, cache, key, s, codec, land.value, stamp, json.size(), ttl);
  }

 private:
  static void install(detail::CacheRuntime& rt, detail::CacheName& cache, std::string_view key, const Settings& s,
                      const ResultCodec& codec, const std::shared_ptr<const void>& value, std::uint64_t stamp,
                      std::size_t weight, std::optional<milliseconds> ttl = std::nullopt) {
    if (s.tier == Tier::remote || !rt.remote().live(Clock::now())) return;
    milliseconds local_ttl = std::min(s.local_ttl, ttl.value_or(s.local_ttl));
    if (codec.empty(value.get())) local_ttl = std::min(local_ttl, s.null_ttl);
    if (local_ttl <= milliseconds(0)) return;
    detail::LocalEntry entry;
    entry.value = value;
    entry.kind = &codec;
    entry.weight = std::max<std::size_t>(1, weight);
    entry.expires = Clock::now() + detail::jittered(local_ttl, key);
    cache.local().put(std::string(key), std::move(entry), stamp);  // a refusal is counted by the tier
  }
};

class CachePutInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    Settings by_name;
    const Settings& s = settings_of(inv, by_name);
    const ResultCodec& codec = codec_of(inv);
    inv.proceed();
    const detail::RuntimeRef rt;
    detail::CacheName& cache = rt->name(name_of(inv, s));
    std::string key_storage;
    const std::string_view key = key_of(inv, s, key_storage);
    const void* result = inv.result();
    // This process never serves the old value again: drop it first, then
    // install the new one under a stamp taken after the drop.
    cache.local().invalidate(key);
    const std::uint64_t stamp = cache.local().stamp(key);
    std::string json;
    if (s.tier != Tier::local || rt->options().local_max_bytes > 0)
      if (!guarded(*rt, cache, key, s, [&] { json = codec.encode(result); })) return;
    if (s.tier != Tier::local) {
      const bool stored = guarded(*rt, cache, key, s, [&] { rt->remote().put(cache.name(), key, json, detail::jittered(s.ttl, key)); });
      if (stored) cache.counters().invalidations_sent.fetch_add(1, std::memory_order_relaxed);
      else return;  // other processes may still hold the old value: do not add a local copy either
    }
    if (s.tier == Tier::remote || !rt->remote().live(Clock::now())) return;
    detail::LocalEntry entry;
    entry.value = codec.share(result);
    entry.kind = &codec;
    entry.weight = std::max<std::size_t>(1, json.size());
    entry.expires = Clock::now() + detail::jittered(std::min(s.local_ttl, s.ttl), key);
    cache.local().put(std::string(key), std::move(entry), stamp);
  }
};

class CacheEvictInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    Settings by_name;
    const Settings& s = settings_of(inv, by_name);
    if (s.before) evict(inv, s);
    inv.proceed();
    if (!s.before) evict(inv, s);
  }

 private:
  static void evict(const Invocation& inv, const Settings& s) {
    const detail::RuntimeRef rt;
    detail::CacheName& cache = rt->name(name_of(inv, s));
    std::string key_storage;
    const std::string_view key = s.all ? std::string_view() : key_of(inv, s, key_storage);
    if (s.all) cache.local().clear();
    else cache.local().invalidate(key);
    if (s.tier == Tier::local) return;
    if (guarded(*rt, cache, key, s, [&] { rt->remote().evict(cache.name(), s.all ? nullptr : &key); }))
      cache.counters().invalidations_sent.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace

// Registers the cache interceptors with Weave::core when this library is
// linked: cmake/link/weave_link_cache.cpp refers to weave_link_cache.
extern "C" WEAVE_API const char weave_link_cache = 0;

namespace {
[[maybe_unused]] const bool cache_registered = [] {
  detail::register_builtin_interceptor("cache", [] { return std::shared_ptr<Interceptor>(std::make_shared<CacheInterceptor>()); });
  detail::register_builtin_interceptor("cache_put", [] { return std::shared_ptr<Interceptor>(std::make_shared<CachePutInterceptor>()); });
  detail::register_builtin_interceptor("cache_evict", [] { return std::shared_ptr<Interceptor>(std::make_shared<CacheEvictInterceptor>()); });
  // weave::configure(): the shared URL, unless WEAVE_CACHE_URL names the cache's own.
  detail::register_url_configurer("cache", [](const std::string& url) {
    const char* own = std::getenv("WEAVE_CACHE_URL");
    configure_cache({.url = own && *own ? std::string(own) : url});
  });
  return true;
}();
}  // namespace

}  // namespace weave
