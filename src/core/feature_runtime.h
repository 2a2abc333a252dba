// What every feature's process-wide runtime has in common ([[lock]],
// [[cache]], [[dedupe]], the queues), written once:
//
//   - RuntimeSlot: the options configure_<feature>() set (else, on first
//     use, what weave::load_options() loads: the environment and
//     $WEAVE_CONFIG) and the runtime made from them on first use; a
//     reconfiguration replaces it (calls in flight keep the one they began
//     with); per-call access takes no lock and writes no shared count; a
//     fork()ed child makes its own from the same options (the parent's
//     threads and connections are left alone, never torn down there).
//   - StoreSchemes: which store serves a URL scheme (mem:// is the feature's
//     own; the Redis schemes register when their library is linked), and
//     open(): the store a feature's options name (their url as given: the
//     loader, core/config.cpp, is the one place that resolves it).
//   - report_event(): an error handed to the options' on_event hook, typed.
//
//   - never_freed() / feature_schemes(): a feature's slot and scheme table,
//     one each in the process, never freed.
//
//   auto& slot = never_freed<RuntimeSlot<CacheRuntime, CacheOptions>>();
//   RuntimeSlot<CacheRuntime, CacheOptions>::Ref rt(slot);   // in a call: rt->...
//   feature_schemes<RemoteTierFactory>("cache").open(options, make_mem);
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/process.h"
#include "weave/config.h"
#include "weave/error.h"
#include "weave/event.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE::detail {

template <class Runtime, class Options>
class RuntimeSlot {
 public:
  RuntimeSlot() {
    guard_across_fork(mutex_, [this]() WEAVE_NO_THREAD_SAFETY_ANALYSIS {  // (the child's one thread)
      // The parent's runtime: its threads are not here and its sockets are
      // the parent's. Kept, never destroyed, never used again.
      if (runtime_) new std::shared_ptr<Runtime>(std::move(runtime_));
      runtime_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
    });
  }
  RuntimeSlot(const RuntimeSlot&) = delete;
  RuntimeSlot& operator=(const RuntimeSlot&) = delete;

  // The runtime in force, made from the configured options on first use
  // (Runtime(Options) validates them and may throw ConfigError, as loading
  // them does).
  std::shared_ptr<Runtime> get() {
    Guard lock(mutex_);
    if (!runtime_) {
      if (!options_) options_ = load_options<Options>();
      runtime_ = std::make_shared<Runtime>(*options_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    return runtime_;
  }

  // The runtime in force if one was made (null before first use): what
  // reads its counts must not start a store connection.
  std::shared_ptr<Runtime> made() {
    Guard lock(mutex_);
    return runtime_;
  }

  // Options for the next runtime; the current one is dropped here (outside
  // the lock) unless a call in flight still holds it.
  void configure(Options options) {
    std::shared_ptr<Runtime> old;
    {
      Guard lock(mutex_);
      options_ = std::move(options);
      old = std::exchange(runtime_, nullptr);
      generation_.fetch_add(1, std::memory_order_release);
    }
  }

  // The runtime for one call. A thread keeps the current runtime while it is
  // outside every call of the feature and sees a reconfiguration (or a
  // fork) at its next outermost call; a call nested in one that began before
  // holds a reference of its own. No lock, no shared count on the common path.
  class Ref {
   public:
    explicit Ref(RuntimeSlot& slot) {
      Held& held = held_here();
      const std::uint64_t generation = slot.generation_.load(std::memory_order_acquire);
      if (held.generation != generation || held.slot != &slot) {
        if (held.depth == 0) {
          held.runtime = for_this_thread(slot.get());
          held.slot = &slot;
          held.generation = generation;
        } else {
          owned_ = slot.get();  // the outer call keeps the thread's one
        }
      }
      rt_ = owned_ ? owned_.get() : held.runtime.get();
      ++held.depth;
    }
    ~Ref() { --held_here().depth; }
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    Runtime& operator*() const noexcept { return *rt_; }
    Runtime* operator->() const noexcept { return rt_; }

   private:
    Runtime* rt_;
    std::shared_ptr<Runtime> owned_;
  };

 private:
  struct Held {
    const RuntimeSlot* slot = nullptr;
    std::uint64_t generation = 0;
    std::shared_ptr<Runtime> runtime;
    int depth = 0;  // calls of this thread in progress
  };
  static Held& held_here() {
    thread_local Held held;
    return held;
  }
  static std::shared_ptr<Runtime> for_this_thread(std::shared_ptr<Runtime> shared) {
    if constexpr (requires { Runtime::for_thread(shared); })
      return Runtime::for_thread(shared);
    else
      return shared;
  }

  Mutex mutex_;
  std::optional<Options> options_ WEAVE_GUARDED_BY(mutex_);  // unset: load_options() at first use
  std::shared_ptr<Runtime> runtime_ WEAVE_GUARDED_BY(mutex_);
  // Bumped whenever runtime_ changes (Ref compares it).
  std::atomic<std::uint64_t> generation_{1};
};

// mem://<name> for a feature: one table of type Table per name in the
// process, made by `make` on first use, shared by every runtime of the same
// URL and kept for the process's life. The one fork rule of mem:// stores:
// they belong to one process, and a fork()ed child starts with none (the
// parent's are left alone, never destroyed: its threads may have been inside
// them, their locks held, at the fork).
template <class Table, class Make>
std::shared_ptr<Table> mem_table(std::string_view name, Make make) {
  using Tables = std::map<std::string, std::shared_ptr<Table>, std::less<>>;
  struct Registry {
    Mutex mutex;
    Tables tables WEAVE_GUARDED_BY(mutex);
  };
  static auto* r = [] {
    auto* made = new Registry;  // usable during exit
    guard_across_fork(made->mutex, [made]() WEAVE_NO_THREAD_SAFETY_ANALYSIS {  // (the child's one thread)
      new Tables(std::move(made->tables));
      made->tables.clear();
    });
    return made;
  }();
  Guard lock(r->mutex);
  auto it = r->tables.find(name);
  if (it == r->tables.end()) it = r->tables.emplace(std::string(name), make()).first;
  return it->second;
}

// ConfigError: no linked library serves `scheme` (`known`: the schemes that are served).
[[noreturn]] void throw_unknown_scheme(std::string_view feature, const std::string& url,
                                                 std::string_view scheme, std::string_view known);

// One feature's table of URL schemes. `feature` names it in errors ("cache").
// A feature reaches its one table through feature_schemes() (below).
// Factory: std::function<std::shared_ptr<Store>(const Options&)>.
template <class Factory>
class StoreSchemes {
 public:
  using Store = typename Factory::result_type;

  explicit StoreSchemes(std::string feature) : feature_(std::move(feature)) {}
  // Throws UsageError for an empty scheme or factory, and for "mem" (the
  // feature's own, which a registration could never replace).
  void add(std::string scheme, Factory factory) {
    if (scheme.empty() || !factory)
      throw UsageError("registering a " + feature_ + " store needs a URL scheme and a factory");
    if (scheme == "mem") throw UsageError("the " + feature_ + " store of the mem:// scheme is built in: register another scheme");
    Guard lock(mutex_);
    factories_[std::move(scheme)] = std::move(factory);
  }
  // The store `o.url` names (as the options say: weave::load_options()
  // already chose it from code, the environment, the file or the default):
  // mem://[table] made by `make_mem(table)`, any other scheme by its
  // factory, given the options. Throws ConfigError naming the URL when no
  // linked library serves its scheme.
  template <class Options>
  Store open(const Options& o, Store (*make_mem)(std::string_view table)) const {
    const StoreUrl u = parse_store_url(o.url);
    if (u.scheme == "mem") return make_mem(u.name);
    return find(o.url, u.scheme)(o);
  }
  // Throws ConfigError when `url` names a scheme other than mem:// that no
  // linked library serves: at configure time, not at the first call.
  void check(const std::string& url) const {
    const std::string scheme = parse_store_url(url).scheme;
    if (scheme != "mem") find(url, scheme);
  }

 private:
  // The factory for `url`'s scheme (`scheme` parsed from it), or ConfigError.
  Factory find(const std::string& url, std::string_view scheme) const {
    Guard lock(mutex_);
    auto it = factories_.find(scheme);
    if (it == factories_.end()) {
      std::string known = "mem";
      for (const auto& served : factories_) known += ", " + served.first;
      throw_unknown_scheme(feature_, url, scheme, known);
    }
    return it->second;
  }

  std::string feature_;
  mutable Mutex mutex_;
  std::map<std::string, Factory, std::less<>> factories_ WEAVE_GUARDED_BY(mutex_);
};

// The one object of type T in the process (a feature's RuntimeSlot), made on
// first use and never freed: usable during exit, after static destructors.
// (core/process.h's process_wide() is for background threads: it stops them.)
template <class T>
T& never_freed() {
  static auto* t = new T;
  return *t;
}

// A feature's one table of schemes, as never_freed(): one per Factory type
// (each feature has its own), `feature` naming it when it is made.
template <class Factory>
StoreSchemes<Factory>& feature_schemes(std::string_view feature) {
  static auto* s = new StoreSchemes<Factory>(std::string(feature));
  return *s;
}

// Hands `error` to `hook` as an Event of `kind` for `feature` and `key`: the
// error itself when it is a weave::Error, else an Error saying `context` and
// the cause. Never throws (the hook must not; an exception is dropped).
void report_event(const EventHook& hook, EventKind kind, std::string_view feature, std::string_view key,
                            const std::exception& error, std::string_view context) noexcept;

}  // namespace weave::detail
