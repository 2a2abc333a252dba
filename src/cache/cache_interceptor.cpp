// The built-in `cache`, `cache_put` and `cache_evict` interceptors
// (docs/cache.md): read-through with single flight, write-through, evict.
// Every store failure fails open: counted, reported, and the call goes on.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <optional>
#include <string>

#include "cache/cache_runtime.h"
#include "core/unique_token.h"
#include "core/builtin.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE {
namespace {

using Clock = std::chrono::steady_clock;
using Counts = detail::CacheCounterStripe;
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
  milliseconds refresh_after{0};  // 0: never
  Tier tier = Tier::both;
  bool sync = false;
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
  if (a.has("sync")) s.sync = a.boolean("sync");
  if (a.has("refresh_after")) s.refresh_after = a.duration("refresh_after");
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

// Completes a call with what the leader of its flight landed: its value, or
// the stored JSON (an aged value another caller is refreshing).
bool complete_from_flight(Invocation& inv, const ResultCodec& mine, const detail::Flight& flight) {
  if (flight.value) return complete_with(inv, mine, *flight.codec, flight.value.get());
  if (flight.json.empty()) return false;
  try {
    inv.complete_from_json(flight.json);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The leader's path of one read (steps 3 and 4 of docs/cache.md, "One read").
class ReadThrough {
 public:
  ReadThrough(Invocation& inv, const Settings& s, const ResultCodec& codec, detail::CacheRuntime& rt,
              detail::CacheName& cache, std::string_view key, std::shared_ptr<detail::Flight> flight)
      : inv_(inv), s_(s), codec_(codec), rt_(rt), cache_(cache), count_(cache.counters()), key_(key),
        land_{cache, std::string(key), std::move(flight), &codec, nullptr, {}, false},
        held_{rt, cache, key, {}, false} {}

  void run() {
    const bool use_remote = s_.tier != Tier::local;
    // sync=true: how long a miss waits for other processes' loads in all.
    const auto deadline = Clock::now() + rt_.options().fill_guard;
    bool waited = false;
    for (;;) {
      // Taken before anything is read: an invalidation from here on refuses the fill.
      stamp_ = cache_.local().stamp(key_);
      land_.stamp = stamp_;
      land_.read_at = Clock::now();
      read_version_.reset();
      if (!use_remote) break;
      detail::RemoteRead stored;
      if (!guarded(rt_, cache_, key_, s_, [&] { stored = rt_.remote().get(cache_.name(), key_); })) break;
      read_version_ = stored.version;
      if (stored.json) {
        if (shared_hit(stored)) return;
        break;  // stored by another version of the type: a miss, overwritten below
      }
      if (!waited) count_.add(&Counts::remote_misses);
      if (!s_.sync) break;
      // One loader in the deployment; the others wait for its value.
      if (held_.token.empty()) held_.token = detail::unique_token();
      detail::FillClaim claim = detail::FillClaim::gave_up;
      if (!guarded(rt_, cache_, key_, s_, [&] {
            claim = rt_.remote().claim_fill(cache_.name(), key_, held_.token, rt_.options().fill_lease,
                                            stored.version, deadline);
          }))
        break;
      if (claim == detail::FillClaim::load) {
        held_.holds = true;
        break;
      }
      if (claim == detail::FillClaim::gave_up) break;  // waited fill_guard: load without the lease
      if (claim == detail::FillClaim::waited && !waited) {
        waited = true;
        count_.add(&Counts::sync_waits);
      }
    }
    load(false);
  }

 private:
  // A value in the shared tier: true when the call is completed with it.
  bool shared_hit(const detail::RemoteRead& stored) {
    if (s_.refresh_after > milliseconds(0) && detail::wall_ms() - stored.written_ms >= s_.refresh_after.count())
      return refresh(stored);
    try {
      inv_.complete_from_json(*stored.json);
    } catch (const std::exception&) {
      count_.add(&Counts::decode_failures);
      return false;
    }
    count_.add(&Counts::remote_hits);
    land_.value = codec_.share(inv_.result());
    install(land_.value, stored.json->size(), stored.written_ms);
    return true;
  }

  // A value older than refresh_after: every caller in the deployment gets it
  // at once, and one of them claims the reload. When the proxy can copy the
  // call (Invocation::detach), the claimer returns the aged value too and the
  // reload (the rest of the chain, then the method, then the fill) runs on
  // the runtime's background thread. Otherwise (a proxy from an older
  // weavegen, or the object is being destroyed) the claimer reloads on its
  // own thread and returns the new value; if that reload throws, the old one.
  bool refresh(const detail::RemoteRead& stored) {
    land_.json = *stored.json;
    land_.now();
    held_.token = detail::unique_token();
    bool claimed = false;
    guarded(rt_, cache_, key_, s_, [&] {
      claimed = rt_.remote().claim_refresh(cache_.name(), key_, stored, held_.token, rt_.options().fill_lease);
    });
    std::exception_ptr failed;
    if (claimed) {
      held_.holds = true;
      if (inv_.can_detach() && reload_in_background(stored)) return true;
      try {
        load(true);
        return true;
      } catch (...) {
        failed = std::current_exception();
      }
      // Kept until the lease ends: at most one failing reload per fill_lease.
      held_.holds = false;
    }
    try {
      inv_.complete_from_json(*stored.json);
    } catch (const std::exception&) {
      if (failed) std::rethrow_exception(failed);
      count_.add(&Counts::decode_failures);
      return false;
    }
    count_.add(&Counts::remote_hits);
    return true;
  }

  // The claimer's way out with a background reload: true when the call was
  // completed with the aged value and the reload queued, which now holds the
  // claim. False (nothing done) when the aged value does not decode or the
  // call cannot be copied: the caller reloads on its own thread.
  bool reload_in_background(const detail::RemoteRead& stored) {
    std::shared_ptr<detail::CacheRuntime> owned = detail::cache_runtime();
    if (owned.get() != &rt_) return false;  // reconfigured meanwhile
    auto job = std::make_shared<Reload>(Reload{std::move(owned), &cache_, s_, &codec_, std::string(key_), stamp_,
                                               read_version_, held_.token, inv_.detach()});
    if (!job->call) return false;
    try {
      inv_.complete_from_json(*stored.json);
    } catch (const std::exception&) {
      return false;  // stored by another version of the type: reload now, on this thread
    }
    count_.add(&Counts::remote_hits);
    held_.holds = false;  // the reload has it now
    if (!detail::run_in_background([job] { job->run(); })) {
      held_.holds = true;  // stopped (exit): the claim goes with this call
      return true;
    }
    return true;
  }

 public:
  // A reload queued by reload_in_background: the fill of load(true), with
  // what the claimer read, on the background thread.
  struct Reload {
    std::shared_ptr<detail::CacheRuntime> rt;
    detail::CacheName* cache;
    Settings settings;
    const ResultCodec* codec;
    std::string key;
    std::uint64_t stamp;
    std::optional<std::uint64_t> read_version;
    std::string token;
    detail::Detached call;
    void run() {
      call.run([this](Invocation& inv) {
        ReadThrough r(inv, settings, *codec, *rt, *cache, key, nullptr);
        r.stamp_ = stamp;
        r.read_version_ = read_version;
        r.held_.token = token;
        r.held_.holds = true;
        try {
          r.load(true);
        } catch (...) {
          // counted by load; the claim is kept until its lease ends, as on the caller's thread
          r.held_.holds = false;
        }
      });
    }
  };

 private:
  // 4. the method, then the fill (which also drops a lease this call holds).
  void load(bool refreshing) {
    const auto started = Clock::now();
    try {
      inv_.proceed();
    } catch (...) {
      count_.add(&Counts::load_failures);
      throw;
    }
    count_.add(&Counts::loads);
    if (refreshing) count_.add(&Counts::refreshes);
    count_.add(&Counts::load_ns, static_cast<std::uint64_t>((Clock::now() - started).count()));
    const void* result = inv_.result();
    land_.value = codec_.share(result);
    const milliseconds ttl = codec_.empty(result) ? s_.null_ttl : s_.ttl;
    if (ttl <= milliseconds(0)) return;  // null_ttl=0ms: empty results are not kept
    // JSON: for the shared tier, and as the local entry's weight under a byte bound.
    std::string json;
    const bool use_remote = s_.tier != Tier::local;
    if (use_remote || rt_.options().local_max_bytes > 0)
      if (!guarded(rt_, cache_, key_, s_, [&] { json = codec_.encode(result); })) return;
    if (use_remote) {
      if (!read_version_) return;  // the shared tier could not be read: nothing known to fill over
      const std::string_view token = held_.holds ? std::string_view(held_.token) : std::string_view();
      if (guarded(rt_, cache_, key_, s_, [&] {
            rt_.remote().fill(cache_.name(), key_, json, detail::jittered(ttl, key_), *read_version_, token);
          }))
        held_.holds = false;  // dropped by the fill, stored or refused
    }
    install(land_.value, json.size(), detail::wall_ms(), ttl);
  }

  void install(const std::shared_ptr<const void>& value, std::size_t weight, std::int64_t written_ms,
               std::optional<milliseconds> ttl = std::nullopt) {
    if (s_.tier == Tier::remote || !rt_.remote().live(Clock::now())) return;
    milliseconds local_ttl = std::min(s_.local_ttl, ttl.value_or(s_.local_ttl));
    if (codec_.empty(value.get())) local_ttl = std::min(local_ttl, s_.null_ttl);
    // A local copy never outlives refresh_after: the read after it goes to
    // the shared tier, which refreshes it for the deployment.
    if (s_.refresh_after > milliseconds(0))
      local_ttl = std::min(local_ttl, milliseconds(written_ms + s_.refresh_after.count() - detail::wall_ms()));
    if (local_ttl <= milliseconds(0)) return;
    detail::LocalEntry entry;
    entry.value = value;
    entry.kind = &codec_;
    entry.weight = std::max<std::size_t>(1, weight);
    entry.expires = Clock::now() + detail::jittered(local_ttl, key_);
    cache_.local().put(std::string(key_), std::move(entry), stamp_);  // a refusal is counted by the tier
  }

  struct Land {  // every way out of the leader's path wakes the waiters, once
    detail::CacheName& cache;
    std::string key;
    std::shared_ptr<detail::Flight> flight;
    const ResultCodec* codec;
    std::shared_ptr<const void> value;
    std::string json;
    std::uint64_t stamp = 0;  // of the read that made `value` / `json`, and when it was taken
    Clock::time_point read_at{};
    bool landed = false;
    void now() {
      if (landed || !flight) return;  // no flight: a background reload
      landed = true;
      cache.land(key, flight, std::move(value), codec, stamp, read_at, std::move(json));
    }
    ~Land() { now(); }
  };
  // A fill lease or refresh claim this call holds: dropped on every way out
  // that did not fill (the method threw, nothing to keep), so that a waiter
  // loads at once instead of waiting for the lease to run out.
  struct Held {
    detail::CacheRuntime& rt;
    detail::CacheName& cache;
    std::string_view key;
    std::string token;
    bool holds = false;
    ~Held() {
      if (!holds) return;
      try {
        rt.remote().release(cache.name(), key, token);
      } catch (const std::exception& e) {
        rt.report(cache, key, e);  // the lease runs out by itself
      }
    }
  };

  Invocation& inv_;
  const Settings& s_;
  const ResultCodec& codec_;
  detail::CacheRuntime& rt_;
  detail::CacheName& cache_;
  detail::CacheCounters& count_;
  std::string_view key_;
  Land land_;
  Held held_;
  std::uint64_t stamp_ = 0;
  std::optional<std::uint64_t> read_version_;  // set when the shared tier was read
};

class CacheInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    Settings by_name;
    const Settings& s = settings_of(inv, by_name);
    const ResultCodec& codec = codec_of(inv);
    const detail::CacheRuntimeRef rt;
    detail::CacheName& cache = rt->name(name_of(inv, s));
    detail::CacheCounters& count = cache.counters();
    std::string key_storage;
    const std::string_view key = key_of(inv, s, key_storage);

    // 1. the local tier, only while the invalidation feed is complete
    const auto now = Clock::now();
    if (s.tier != Tier::remote && rt->remote().live(now)) {
      // A value of this method's type is copied into the result inside the
      // read (no reference count written); another type is converted after.
      bool done = false;
      std::shared_ptr<const void> other;
      const ResultCodec* other_codec = nullptr;
      const bool found = cache.local().visit(key, now, [&](const detail::LocalEntry& e) {
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
        count.add(&Counts::local_hits);
        return;
      }
      count.add(&Counts::local_misses);
    }

    // 2. one load per key in this process; the others wait for its value
    for (int attempt = 0;; ++attempt) {
      auto [flight, leader] = cache.join(std::string(key));
      if (leader) {
        ReadThrough(inv, s, codec, *rt, cache, key, std::move(flight)).run();
        return;
      }
      std::unique_lock lock(flight->mutex);
      flight->done_cv.wait(lock, [&] { return flight->done; });
      const bool failed = !flight->value && flight->json.empty();
      // A leader that read before this call began may have read before a
      // write that completed before it, and been slow since: its value is
      // taken only if no invalidation of the key came in since its read and
      // the feed is confirmed (every write completed more than feed_lag ago
      // has been applied), as for a local hit. Else read again.
      const bool superseded = flight->read_at < now && (flight->stamp != cache.local().stamp(key) ||
                                                        !rt->remote().live(Clock::now()));
      if (!failed && !superseded && complete_from_flight(inv, codec, *flight)) {
        count.add(&Counts::shared_loads);
        return;
      }
      lock.unlock();
      if (failed || attempt == 2) {
        inv.proceed();  // the leader's load failed (or writes keep coming): this caller loads for itself
        return;
      }
    }
  }
};

class CachePutInterceptor final : public CacheInterceptorBase {
 public:
  void around(Invocation& inv) override {
    Settings by_name;
    const Settings& s = settings_of(inv, by_name);
    const ResultCodec& codec = codec_of(inv);
    inv.proceed();
    const detail::CacheRuntimeRef rt;
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
      bool sent = false;
      const bool stored = guarded(*rt, cache, key, s, [&] { sent = rt->remote().put(cache.name(), key, json, detail::jittered(s.ttl, key)); });
      if (!stored) return;  // other processes may still hold the old value: do not add a local copy either
      cache.counters().add(&Counts::invalidations_sent);
      if (sent) cache.counters().add(&Counts::invalidation_messages);
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
    const detail::CacheRuntimeRef rt;
    detail::CacheName& cache = rt->name(name_of(inv, s));
    std::string key_storage;
    const std::string_view key = s.all ? std::string_view() : key_of(inv, s, key_storage);
    if (s.all) cache.local().clear();
    else cache.local().invalidate(key);
    if (s.tier == Tier::local) return;
    bool sent = false;
    if (guarded(*rt, cache, key, s, [&] { sent = rt->remote().evict(cache.name(), s.all ? nullptr : &key); })) {
      cache.counters().add(&Counts::invalidations_sent);
      if (sent) cache.counters().add(&Counts::invalidation_messages);
    }
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
