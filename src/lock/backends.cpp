// The backend factory, keyed by URL scheme. mem:// is built in (core's
// mem_table: one table per name, none in a fork()ed child); other backends
// register their schemes when their library is linked (Weave::lock_redis:
// src/lock/redis/register_backends.cpp), so the lock core includes no backend.
#include <map>
#include <mutex>

#include "core/feature_runtime.h"
#include "internal.h"
#include "mem_backend.h"
#include "weave/url.h"
#include "weave/error.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, LockBackendFactory, std::less<>> factories;
};

Registry& registry() {
  static Registry* r = [] {
    auto* made = new Registry;  // usable during exit
    detail::guard_across_fork(made->mutex);
    return made;
  }();
  return *r;
}

// Caller holds r.mutex.
ConfigError unknown_scheme(const Registry& r, const std::string& url, std::string_view scheme) {
  std::string known = "mem";
  for (const auto& [name, factory] : r.factories) known += ", " + name;
  std::string hint;
  if (scheme == "redis" || scheme == "redis+cluster" || scheme == "redis+sentinel" || scheme == "redlock")
    hint = "; link Weave::redis (or Weave::weave) for " + std::string(scheme) + "://";
  return ConfigError("lock url '" + redact_url(url) + "': unknown scheme '" + std::string(scheme) + "' (known: " + known +
                         ", or one added with register_lock_backend" + hint + ")",
                     "url");
}

}  // namespace

namespace detail {
void require_known_scheme(const std::string& url, std::string_view scheme) {
  if (scheme == "mem") return;
  Registry& r = registry();
  std::lock_guard g(r.mutex);
  if (r.factories.count(scheme) == 0) throw unknown_scheme(r, url, scheme);
}
}  // namespace detail

std::string_view to_string(LockType type) noexcept {
  switch (type) {
    case LockType::reentrant: return "reentrant";
    case LockType::fair: return "fair";
    case LockType::read: return "read";
    case LockType::write: return "write";
  }
  return "?";
}

// ---- LockBackend: defaults for backends without lock types ----

bool LockBackend::supports(LockType type) const { return type == LockType::reentrant; }

void LockBackend::leave_queue(const ReleaseRequest&) {}

std::vector<LockState> LockBackend::list(std::string_view) {
  throw UsageError("this lock backend cannot list its locks");
}

ForcedRelease LockBackend::force_release(std::string_view key) {
  throw UsageError("this lock backend cannot force lock '" + std::string(key) + "' free");
}

void register_lock_backend(std::string scheme, LockBackendFactory factory) {
  if (scheme.empty() || !factory) throw UsageError("register_lock_backend needs a scheme and a factory");
  Registry& r = registry();
  std::lock_guard g(r.mutex);
  r.factories[std::move(scheme)] = std::move(factory);
}

std::shared_ptr<LockBackend> make_lock_backend(const LockOptions& options) {
  const StoreUrl url = parse_store_url(options.url);
  Registry& r = registry();
  LockBackendFactory factory;
  {
    std::lock_guard g(r.mutex);
    if (auto it = r.factories.find(url.scheme); it != r.factories.end())
      factory = it->second;
    else if (url.scheme != "mem")
      throw unknown_scheme(r, options.url, url.scheme);
  }
  // (mem:// is core's one kind of in-process table, with its fork rule)
  if (!factory) return detail::mem_table<LockBackend>(url.name, [] { return detail::make_mem_backend(); });
  auto backend = factory(options);
  if (!backend) throw ConfigError("lock url '" + redact_url(options.url) + "': the backend factory returned null");
  return backend;
}

}  // namespace weave
