#pragma once

#include <chrono>
#include <memory>
#include <string_view>

#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

// A new, empty in-process lease table.
std::shared_ptr<LockBackend> make_mem_backend();

// True when `backend` is a mem:// table (it takes the caller's clock reading,
// AcquireRequest::now, instead of reading the clock again).
bool is_mem_backend(const LockBackend* backend) noexcept;

}  // namespace weave::detail
