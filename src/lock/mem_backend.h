#pragma once

#include <memory>

#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {
// A new, empty in-process lease table.
WEAVE_API std::shared_ptr<LockBackend> make_mem_backend();
}  // namespace weave::detail
