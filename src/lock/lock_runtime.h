// The process-wide lock client the `lock` interceptor and default_lock_client()
// use: core's RuntimeSlot (core/feature_runtime.h), as every feature's runtime.
// configure_locks() sets its options, else the first use loads them
// (weave::load_options: the environment, $WEAVE_CONFIG); a fork()ed child
// makes its own client from the same options.
//
//   LockRuntimeRef rt;            // for one call: no lock, no shared count
//   rt->client.try_acquire(...);  // this thread's copy of the client
#pragma once

#include <memory>

#include "core/feature_runtime.h"
#include "weave/lock.h"

namespace WEAVE_NAMESPACE::detail {

struct LockRuntime {
  explicit LockRuntime(const LockOptions& options) : client(options) {}
  explicit LockRuntime(LockClient c) : client(std::move(c)) {}
  // A copy for one thread: the same client, with a reference count of its
  // own, so that the leases of threads using the process-wide client do not
  // all count on one cache line (RuntimeSlot calls it per thread).
  static std::shared_ptr<LockRuntime> for_thread(const std::shared_ptr<LockRuntime>& shared);

  LockClient client;
};

using LockRuntimeSlot = RuntimeSlot<LockRuntime, LockOptions>;
LockRuntimeSlot& lock_runtime_slot();

// The process-wide client for the duration of one call.
class LockRuntimeRef : public LockRuntimeSlot::Ref {
 public:
  LockRuntimeRef() : LockRuntimeSlot::Ref(lock_runtime_slot()) {}
};

}  // namespace weave::detail
