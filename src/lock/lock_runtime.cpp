#include "lock_runtime.h"

#include "internal.h"

namespace WEAVE_NAMESPACE {
namespace detail {

LockRuntimeSlot& lock_runtime_slot() { return never_freed<LockRuntimeSlot>(); }

std::shared_ptr<LockRuntime> LockRuntime::for_thread(const std::shared_ptr<LockRuntime>& shared) {
  return std::make_shared<LockRuntime>(LeaseControl::thread_copy(shared->client));
}

}  // namespace detail

void configure_locks(LockOptions options) {
  options.validate();
  detail::lock_runtime_slot().configure(std::move(options));
}

LockClient default_lock_client() {
  detail::LockRuntimeRef rt;
  return rt->client;
}

}  // namespace weave
