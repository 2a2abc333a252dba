#pragma once

#include <memory>

#include "weave/lock_backend.h"

namespace weave::detail {
// A new, empty in-process lease table.
std::shared_ptr<LockBackend> make_mem_backend();
}  // namespace weave::detail
