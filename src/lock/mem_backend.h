#pragma once

#include <chrono>
#include <memory>
#include <string_view>

#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

// A new, empty in-process lease table.
WEAVE_API std::shared_ptr<LockBackend> make_mem_backend();

// The mem:// backend's reentrant acquire and release with the caller's
// steady_clock reading as "now" (LockClient reads the clock once per
// acquisition and once per release; a read costs ~30 ns on a VM). Backends
// otherwise read the clock themselves (LockBackend has no such argument).
class MemTimed {
 public:
  virtual AcquireResult try_acquire_at(std::string_view key, std::string_view owner, std::chrono::milliseconds lease,
                                       std::chrono::steady_clock::time_point now) = 0;
  virtual ReleaseResult release_at(std::string_view key, std::string_view owner,
                                   std::chrono::steady_clock::time_point now) = 0;

 protected:
  ~MemTimed() = default;
};

// `backend` as MemTimed when it is a mem:// table, else null.
WEAVE_API MemTimed* as_mem_timed(LockBackend* backend) noexcept;

}  // namespace weave::detail
