#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

// A new, empty in-process lease table.
std::shared_ptr<LockBackend> make_mem_backend();

// True when `backend` is a mem:// table (it takes the caller's clock reading,
// AcquireRequest::now, instead of reading the clock again).
bool is_mem_backend(const LockBackend* backend) noexcept;

// Where a key's slot sits in a mem:// table, from its acquisition to its
// release: the release then goes to it without hashing the key and looking
// it up again, unless a slot of its shard was dropped meanwhile (then it
// looks the key up, as without a hint).
struct MemSlotHint {
  void* shard = nullptr;
  void* slot = nullptr;
  std::uint64_t drops = 0;  // the shard's count of dropped slots when taken
};
// LockBackend::acquire() and release() of a mem:// table (`backend`, per
// is_mem_backend()), an acquisition filling `hint`, a release reading it.
AcquireResult mem_acquire(LockBackend& backend, const AcquireRequest& request, MemSlotHint& hint);
ReleaseResult mem_release(LockBackend& backend, const ReleaseRequest& request, const MemSlotHint& hint);

}  // namespace weave::detail
