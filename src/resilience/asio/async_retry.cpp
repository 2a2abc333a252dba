// The `retry` interceptor of asynchronous methods: the rest of the chain
// again after a retryable weave::Error, the backoff's wait a timer on the
// call's executor (no thread held). A call cancelled while it waits ends
// with operation_aborted.
#include "async/async_call.h"
#include "resilience/retry_call.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class AsyncRetryInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const RetryPolicy& p = *inv.prepared<RetryPolicy>();
    for (int done = 1;; ++done) {
      try {
        co_await inv.proceed();
        co_return;
      } catch (const Error& e) {
        // (after the method itself returned: not the method's to run again)
        if (!e.retryable() || done >= p.attempts || inv.proceeded()) throw;
      }
      // (the wait is out of the handler: no co_await may stand in one)
      net::steady_timer backoff(co_await net::this_coro::executor, retry_delay(p, done));
      co_await backoff.async_wait(net::use_awaitable);
    }
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_retry keeps this object in a static link (REGISTERS in
// src/CMakeLists.txt).
extern "C" const char weave_link_asio_retry = 0;

namespace {
[[maybe_unused]] const bool async_retry_registered = [] {
  detail::register_async_builtin<detail::AsyncRetryInterceptor>("retry");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
