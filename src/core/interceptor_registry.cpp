#include <atomic>
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "builtin.h"
#include "chain.h"
#include "process.h"
#include "weave/interceptor.h"

namespace WEAVE_NAMESPACE {
namespace {

// Adapts a plain callable to the Interceptor interface.
class FunctionInterceptor final : public Interceptor {
 public:
  explicit FunctionInterceptor(std::function<void(Invocation&)> f) : f_(std::move(f)) {}
  void around(Invocation& inv) override { f_(inv); }

 private:
  std::function<void(Invocation&)> f_;
};

// One chain per (method, registry version), built on the first call that
// misses it. Chains are never freed: a call in flight on another thread may
// still use one after the registry changed. So memory is bounded by methods ×
// registry changes, however many threads call and however their per-thread
// caches collide.
struct ChainStore {
  struct Entry {
    std::uint64_t version = 0;
    const detail::Chain* chain = nullptr;
  };
  detail::SharedMutex mutex;
  std::unordered_map<const MethodInfo*, Entry> latest WEAVE_GUARDED_BY(mutex);
  std::deque<detail::Chain> chains WEAVE_GUARDED_BY(mutex);
  std::deque<std::shared_ptr<Interceptor>> keep_alive WEAVE_GUARDED_BY(mutex);
};
ChainStore& chain_store() {
  static ChainStore* store = new ChainStore;  // outlives static destructors
  return *store;
}

}  // namespace

std::shared_ptr<const void> Interceptor::prepare(const AnnotationSpec&) { return nullptr; }

struct InterceptorRegistry::Impl {
  mutable detail::SharedMutex mutex;
  std::map<std::string, std::shared_ptr<Interceptor>, std::less<>> by_name WEAVE_GUARDED_BY(mutex);
  std::atomic<std::uint64_t> version{1};
};

namespace detail {
struct RegistryAccess {
  static const std::atomic<std::uint64_t>& version(const InterceptorRegistry& r) noexcept { return r.impl_->version; }
};
}  // namespace detail

InterceptorRegistry::InterceptorRegistry() : impl_(std::make_unique<Impl>()) {}
InterceptorRegistry::~InterceptorRegistry() = default;

InterceptorRegistry& InterceptorRegistry::global() {
  static InterceptorRegistry* registry = new InterceptorRegistry;  // usable during exit
  return *registry;
}

std::uint64_t InterceptorRegistry::version() const noexcept {
  return impl_->version.load(std::memory_order_acquire);
}

void InterceptorRegistry::add(std::string annotation, std::shared_ptr<Interceptor> interceptor) {
  if (!interceptor) throw UsageError("null interceptor for annotation '" + annotation + "'");
  detail::Guard lock(impl_->mutex);
  impl_->by_name[std::move(annotation)] = std::move(interceptor);
  impl_->version.fetch_add(1, std::memory_order_acq_rel);
}

void InterceptorRegistry::add(std::string annotation, std::function<void(Invocation&)> around) {
  if (!around) throw UsageError("empty function for annotation '" + annotation + "'");
  add(std::move(annotation), std::make_shared<FunctionInterceptor>(std::move(around)));
}

bool InterceptorRegistry::remove(std::string_view annotation) {
  detail::Guard lock(impl_->mutex);
  auto it = impl_->by_name.find(annotation);
  if (it == impl_->by_name.end()) return false;
  impl_->by_name.erase(it);
  impl_->version.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

std::shared_ptr<Interceptor> InterceptorRegistry::find(std::string_view annotation) const {
  detail::SharedGuard lock(impl_->mutex);
  auto it = impl_->by_name.find(annotation);
  return it == impl_->by_name.end() ? nullptr : it->second;
}

namespace detail {

namespace {
std::map<std::string, BuiltinFactory, std::less<>>& builtin_factories() {
  static auto* factories = new std::map<std::string, BuiltinFactory, std::less<>>;  // static-init safe
  return *factories;
}
}  // namespace

// Only from static initialisation (one thread), before any call is woven.
void register_builtin_interceptor(std::string_view annotation_name, BuiltinFactory factory) {
  builtin_factories()[std::string(annotation_name)] = factory;
}

namespace {
std::map<std::string, BuiltinDecorator, std::less<>>& builtin_decorators() {
  static auto* decorators = new std::map<std::string, BuiltinDecorator, std::less<>>;  // static-init safe
  return *decorators;
}
}  // namespace

void register_builtin_decorator(std::string_view annotation_name, BuiltinDecorator decorate) {
  builtin_decorators()[std::string(annotation_name)] = decorate;
}

std::shared_ptr<Interceptor> make_builtin_interceptor(std::string_view annotation_name) {
  const auto& factories = builtin_factories();
  auto it = factories.find(annotation_name);
  if (it == factories.end()) return nullptr;
  std::shared_ptr<Interceptor> made = it->second();
  const auto& decorators = builtin_decorators();
  auto d = decorators.find(annotation_name);
  return d == decorators.end() ? made : d->second(std::move(made));
}

namespace {

std::shared_ptr<Interceptor> find_or_install(InterceptorRegistry& registry, std::string_view name) {
  if (auto found = registry.find(name)) return found;
  auto builtin = make_builtin_interceptor(name);
  if (builtin) registry.add(std::string(name), builtin);
  return builtin;
}

// What `interceptor` makes of annotation `a` once per method. An error it
// throws (a value outside the vocabulary in a spec written by hand, say)
// fails the call before any interceptor runs, naming the annotation, the
// method and where the annotation stands.
std::shared_ptr<const void> prepare_annotation(Interceptor& interceptor, const AnnotationSpec& a,
                                               const MethodInfo& info) {
  try {
    return interceptor.prepare(a);
  } catch (Error& e) {
    name_where(e, std::string(a.name) + " on " + std::string(info.qualified_name) + " at " + std::string(info.file) +
                      ":" + std::to_string(a.line));
    throw;
  }
}

Chain build_chain(const MethodInfo& info, std::vector<std::shared_ptr<Interceptor>>& owners) {
  InterceptorRegistry& registry = InterceptorRegistry::global();
  Chain chain;
  for (const AnnotationSpec& a : info.annotations) {
    auto interceptor = find_or_install(registry, a.name);
    if (!interceptor)
      throw UsageError("no interceptor registered for annotation '" + std::string(a.name) +
                       "' (used by " + std::string(info.qualified_name) + " at " +
                       std::string(info.file) + ":" + std::to_string(a.line) +
                       "); call weave::InterceptorRegistry::global().add(\"" +
                       std::string(a.name) + "\", ...) before the first call");
    chain.interceptors.push_back(interceptor.get());
    chain.prepared.push_back(prepare_annotation(*interceptor, a, info));
    owners.push_back(std::move(interceptor));
  }
  return chain;
}

// The shared chain of `info` for `version`, built once. Out of line: the
// per-call path (resolve_chain's cache hit) stays small.
[[gnu::noinline]] const Chain& shared_chain(const MethodInfo& info, std::uint64_t version) {
  ChainStore& store = chain_store();
  {
    SharedGuard lock(store.mutex);
    auto it = store.latest.find(&info);
    if (it != store.latest.end() && it->second.version == version) return *it->second.chain;
  }
  // Built outside the store's lock: installing a built-in interceptor takes
  // the registry's lock.
  std::vector<std::shared_ptr<Interceptor>> owners;
  Chain chain = build_chain(info, owners);
  Guard lock(store.mutex);
  ChainStore::Entry& entry = store.latest[&info];
  if (entry.chain && entry.version == version) return *entry.chain;  // another thread won
  for (auto& o : owners) store.keep_alive.push_back(std::move(o));
  entry = {version, &store.chains.emplace_back(std::move(chain))};
  return *entry.chain;
}

}  // namespace

const Chain& resolve_chain(const MethodInfo& info) {
  // A small per-thread direct-mapped cache keeps the hot path free of locks.
  struct Slot {
    const MethodInfo* info = nullptr;
    std::uint64_t version = 0;
    const Chain* chain = nullptr;
  };
  thread_local Slot cache[64];
  static const std::atomic<std::uint64_t>& global_version =
      RegistryAccess::version(InterceptorRegistry::global());
  const std::uint64_t version = global_version.load(std::memory_order_acquire);
  Slot& slot = cache[(reinterpret_cast<std::uintptr_t>(&info) >> 4) % 64];
  if (slot.info == &info && slot.version == version) return *slot.chain;
  // Record the version read before building: a change racing with the build
  // (or the built-in install itself) makes the next call rebuild once.
  const Chain& chain = shared_chain(info, version);
  slot = {&info, version, &chain};
  return chain;
}

}  // namespace detail
}  // namespace weave
