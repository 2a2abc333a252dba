// Threads for work that blocks and must not block an io_context: a plain
// weave::Interceptor's around() on an asynchronous method (its proceed()
// waits for the rest of the chain). A job runs on an idle thread or, when
// none is idle, on a new one: a job that waits for another job never waits
// for a free thread. Idle threads end after a while. One pool per process; a
// fork()ed child starts with none.
#pragma once

#include <functional>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// Runs `job` on a thread of the pool. `job` must not throw.
WEAVE_API void run_blocking(std::function<void()> job);

// Threads of the pool alive now (busy or idle), for tests and metrics.
WEAVE_API int blocking_threads() noexcept;

}  // namespace weave::detail
