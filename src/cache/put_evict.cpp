// The built-in `cache_put` (write-through: the method's result replaces the
// stored value everywhere) and `cache_evict` interceptors (docs/cache.md).
#include <algorithm>
#include <string>

#include "cache/cache_settings.h"

namespace WEAVE_NAMESPACE::detail::cache {
namespace {

class CachePutInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    const Settings& s = settings_of(inv);
    const ResultCodec& codec = codec_of(inv);
    inv.proceed();
    const CacheRuntimeRef rt;
    const CacheNameRef held = cache_of(*rt, inv, s);
    CacheName& cache = *held;
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
      bool sent = false;
      const bool stored = guarded(*rt, cache, key, s, [&] { sent = rt->remote().put(cache.name(), key, json, jittered(s.ttl, key)); });
      if (!stored) return;  // other processes may still hold the old value: do not add a local copy either
      cache.counters().add(&Counts::invalidations_sent);
      if (sent) cache.counters().add(&Counts::invalidation_messages);
    }
    if (s.tier == Tier::remote || !rt->remote().live(Clock::now())) return;
    LocalEntry entry;
    entry.value = codec.share(result);
    entry.kind = &codec;
    entry.weight = std::max<std::size_t>(1, json.size());
    entry.expires = Clock::now() + jittered(std::min(s.local_ttl, s.ttl), key);
    cache.local().put(std::string(key), std::move(entry), stamp);
  }
};

class CacheEvictInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    const Settings& s = settings_of(inv);
    if (s.before) evict(inv, s);
    inv.proceed();
    if (!s.before) evict(inv, s);
  }

 private:
  static void evict(const Invocation& inv, const Settings& s) {
    const CacheRuntimeRef rt;
    const CacheNameRef held = cache_of(*rt, inv, s);
    CacheName& cache = *held;
    std::string key_storage;
    const std::string_view key = s.all ? std::string_view() : key_of(inv, s, key_storage);
    guarded(*rt, cache, key, s, [&] { rt->evict(cache, s.all ? nullptr : &key, s.tier != Tier::local); });
  }
};

}  // namespace

std::shared_ptr<Interceptor> make_put_interceptor() { return std::make_shared<CachePutInterceptor>(); }
std::shared_ptr<Interceptor> make_evict_interceptor() { return std::make_shared<CacheEvictInterceptor>(); }

}  // namespace weave::detail::cache
