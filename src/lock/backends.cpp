// The lock's URL schemes: core's StoreSchemes, as every feature's. mem:// is
// built in (core's mem_table: one table per name, none in a fork()ed child);
// other backends register their schemes when their library is linked
// (Weave::lock_redis: src/lock/redis/register_backends.cpp), so the lock core
// includes no backend.
#include "core/feature_runtime.h"
#include "internal.h"
#include "mem_backend.h"
#include "weave/url.h"
#include "weave/error.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE {
namespace {

detail::StoreSchemes<LockBackendFactory>& schemes() { return detail::feature_schemes<LockBackendFactory>("lock"); }

std::shared_ptr<LockBackend> make_mem(std::string_view table) {
  return detail::mem_table<LockBackend>(table, [] { return detail::make_mem_backend(); });
}

}  // namespace

namespace detail {
void check_lock_scheme(const std::string& url) { schemes().check(url); }
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
  schemes().add(std::move(scheme), std::move(factory));
}

std::shared_ptr<LockBackend> make_lock_backend(const LockOptions& options) {
  auto backend = schemes().open(options, make_mem);
  if (!backend) throw ConfigError("lock url '" + redact_url(options.url) + "': the backend factory returned null", "url");
  return backend;
}

}  // namespace weave
