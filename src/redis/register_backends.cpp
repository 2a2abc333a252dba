// Registers the Redis schemes with the lock backend registry when Weave::redis
// is linked: redis://, redis+cluster://, redis+sentinel://, redlock://.
// Nothing refers to this object (the URL picks the backend at run time):
// cmake/link/weave_link_redis.cpp refers to weave_link_redis so that the link
// keeps it.
#include "cluster/cluster.h"
#include "redlock/redlock.h"
#include "sentinel/sentinel.h"
#include "weave/lock_backend.h"
#include "weave/redis.h"

namespace WEAVE_NAMESPACE {

extern "C" WEAVE_API const char weave_link_redis = 0;

namespace {
[[maybe_unused]] const bool redis_registered = [] {
  register_lock_backend("redis", [](const LockOptions& o) { return make_redis_lock_backend(o); });
  register_lock_backend("redis+cluster", [](const LockOptions& o) { return cluster::make_cluster_backend(o); });
  register_lock_backend("redis+sentinel", [](const LockOptions& o) { return sentinel::make_sentinel_backend(o); });
  register_lock_backend("redlock", [](const LockOptions& o) { return redlock::make_redlock_backend(o); });
  return true;
}();
}  // namespace

}  // namespace weave
