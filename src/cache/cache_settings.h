// What the cache interceptors share: the settings one [[cache...]]
// annotation says (read once per method by prepare()), the call's name and
// key, and how a store step fails open. Used by cache_interceptor.cpp
// (local hit, single flight), read_through.cpp, background_reload.cpp and
// put_evict.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_runtime.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/result_codec.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE::detail::cache {

using Clock = std::chrono::steady_clock;
using Counts = CacheCounterStripe;
using std::chrono::milliseconds;

enum class Tier { both, local, remote };
namespace vocab = vocabulary::cache;
// The C++ enum follows the vocabulary's order (weavegen emits indexes into it).
static_assert(vocab::tier_values[static_cast<int>(Tier::local)] == "local" &&
              vocab::tier_values[static_cast<int>(Tier::remote)] == "remote");
static_assert(vocab::on_error_values[1] == "throw");
// One Settings serves cache, cache_put and cache_evict: their shared arguments agree.
static_assert(vocabulary::cache_put::ttl == vocab::ttl && vocabulary::cache_put::local_ttl == vocab::local_ttl &&
              vocabulary::cache_put::tier == vocab::tier && vocabulary::cache_evict::tier == vocab::tier &&
              vocabulary::cache_put::on_error == vocab::on_error && vocabulary::cache_evict::on_error == vocab::on_error);

// What one [[cache...]] annotation says, read once per method. An argument
// not written takes the vocabulary's default (annotations/cache.json).
struct Settings {
  // The name; with name_slot (a template rendered per call), the template as
  // written, which labels the metrics of every name it renders. "": the
  // method's qualified name.
  std::string name;
  int name_slot = -1;
  int key_slot = -1;  // the key template's slot, rendered per call
  std::optional<std::string> key;  // a key written as text; neither: every argument makes the key
  milliseconds ttl = vocab::ttl;
  milliseconds local_ttl = vocab::local_ttl;
  milliseconds null_ttl = vocab::null_ttl;
  milliseconds refresh_after{0};  // 0: never (the vocabulary gives none)
  Tier tier = static_cast<Tier>(vocab::tier);
  bool sync = vocab::sync;
  bool throw_errors = vocab::on_error == 1;  // on_error=throw
  bool all = vocabulary::cache_evict::all;
  bool before = vocabulary::cache_evict::before;
};

// Throws UsageError for a value outside the vocabulary.
Settings read_settings(const Annotation& a);

// The key template rendered for this call; without key=, every argument
// rendered as a key part, joined by ':' into `storage` (a type without key
// formatting is a UsageError naming it: write key= then).
inline std::string_view key_of(const Invocation& inv, const Settings& s, std::string& storage) {
  if (s.key_slot >= 0) return inv.annotation().rendered(s.key_slot);
  if (s.key) return *s.key;
  for (std::size_t i = 0; i < inv.arg_count(); ++i) {
    if (i) storage += ':';
    storage += inv.arg(i).text();
  }
  return storage;
}

inline const ResultCodec& codec_of(const Invocation& inv) {
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
bool complete_with(Invocation& inv, const ResultCodec& mine, const ResultCodec& made_by, const void* value);

// Runs a store step; a failure is counted and reported, and thrown only
// under on_error=throw. Returns false when it failed.
template <class F>
bool guarded(CacheRuntime& rt, CacheName& cache, std::string_view key, const Settings& s, F&& step) {
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

// The cache a call reads: its name= (rendered), or the method's name.
inline std::string_view cache_name_of(const Invocation& inv, const Settings& s) {
  if (s.name_slot >= 0) return inv.annotation().rendered(s.name_slot);
  return s.name.empty() ? inv.method() : std::string_view(s.name);
}

// The cache a call reads, found or made in the runtime, labelled for metrics;
// held by the handle for as long as the call uses it.
inline CacheNameRef cache_of(CacheRuntime& rt, const Invocation& inv, const Settings& s) {
  return rt.name(cache_name_of(inv, s), s.name_slot >= 0 ? std::string_view(s.name) : std::string_view());
}

class CacheInterceptorBase : public Interceptor {
 public:
  // Every call's chain runs this first (generated or written by hand); a
  // bad value fails the call, and the chain names the method.
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    return std::make_shared<Settings>(read_settings(Annotation(spec, {})));
  }

 protected:
  // What the annotation says, read once per method by prepare().
  static const Settings& settings_of(const Invocation& inv) { return *inv.prepared<Settings>(); }
};

// The cache_put and cache_evict interceptors (put_evict.cpp).
std::shared_ptr<Interceptor> make_put_interceptor();
std::shared_ptr<Interceptor> make_evict_interceptor();

}  // namespace weave::detail::cache
