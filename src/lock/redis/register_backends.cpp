// Registers the Redis schemes with the lock backend registry when Weave::lock_redis
// is linked: redis://, redis+cluster://, redis+sentinel://, redlock://.
// Nothing refers to this object (the URL picks the backend at run time):
// every target linking the static library names weave_link_lock_redis
// (-u: REGISTERS in src/CMakeLists.txt) so that the link keeps it.
#include "lock/redis/backends.h"
#include "store/open.h"
#include "weave/lock_backend.h"
#include "weave/redis.h"

namespace WEAVE_NAMESPACE {

extern "C" const char weave_link_lock_redis = 0;

namespace {
[[maybe_unused]] const bool redis_registered = [] {
  for (const char* scheme : store::executor_schemes)
    register_lock_backend(scheme, [](const LockOptions& o) { return lock_redis::make_store_backend(o); });
  register_lock_backend("redlock", [](const LockOptions& o) { return lock_redis::make_redlock_backend(o); });
  return true;
}();
}  // namespace

}  // namespace weave
