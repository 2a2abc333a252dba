// Interceptors across the synchronous/asynchronous divide: a plain
// weave::Interceptor on an asynchronous method (here), an AsyncInterceptor on
// a synchronous one (AsyncInterceptor::around, in sync_interceptor.cpp).
#pragma once

#include "weave/asio.h"
#include <cstddef>

#include "async/async_call.h"

namespace WEAVE_NAMESPACE::detail {

// Runs plain interceptor `depth` of the call on the blocking pool; its
// proceed() runs the rest of the call as coroutines on the call's executor
// and blocks that pool thread until they finished.
net::awaitable<void> run_sync_interceptor(AsyncCall& call, std::size_t depth);

}  // namespace weave::detail
