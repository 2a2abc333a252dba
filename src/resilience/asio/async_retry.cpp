// The `retry` interceptor of asynchronous methods: the rest of the chain
// again after an error the policy retries, the backoff's wait a timer on the
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
    const ParsedRetry& parsed = *inv.prepared<ParsedRetry>();
    const RetryPolicy& p = parsed.policy;
    for (int done = 1;; ++done) {
      std::exception_ptr error;
      try {
        co_await inv.proceed();
        co_return;
      } catch (...) {
        error = std::current_exception();
      }
      // A cancelled call is not run again, whatever retry_on says (inner
      // interceptors may have reset the cancellation state: its error tells).
      const net::cancellation_state cancel = co_await net::this_coro::cancellation_state;
      if (cancel.cancelled() != net::cancellation_type::none || is_operation_aborted(error))
        std::rethrow_exception(error);
      // (after the method itself returned: not the method's to run again)
      if (done >= p.attempts || !retries(p, error) || inv.proceeded()) {
        if (parsed.to_fallback(error, inv.proceeded())) co_return;  // spent: skipped to the fallback
        std::rethrow_exception(error);
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
