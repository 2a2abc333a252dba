// The `circuit_breaker` interceptor of asynchronous methods: the blocking
// one's steps around a co_await. A call cancelled (operation_aborted)
// counts for nothing: its pass is dropped, a probe's place given back.
#include <exception>

#include "async/async_call.h"
#include "resilience/circuit_breaker_call.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class AsyncCircuitBreakerInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const ParsedCircuitBreaker& p = *inv.prepared<ParsedCircuitBreaker>();
    CircuitPass pass = p.breaker.try_pass();
    if (!pass) {
      p.refused();
      co_return;
    }
    std::exception_ptr error;
    try {
      co_await inv.proceed();
    } catch (...) {
      error = std::current_exception();
    }
    if (!error) {
      pass.succeeded();
      co_return;
    }
    if (!is_operation_aborted(error)) p.end_with(pass, error);
    std::rethrow_exception(error);
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_circuit_breaker keeps this object in a static link
// (REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_asio_circuit_breaker = 0;

namespace {
[[maybe_unused]] const bool async_circuit_breaker_registered = [] {
  detail::register_async_builtin<detail::AsyncCircuitBreakerInterceptor>("circuit_breaker");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
