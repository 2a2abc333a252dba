// The `timeout` interceptor of asynchronous methods: the rest of the call
// runs as a child coroutine raced against a timer. At the deadline the child
// alone is cancelled (its pending co_await ends with operation_aborted), and
// once it has unwound the caller gets TimeoutExceeded. A cancellation of the
// whole call reaches both and passes on as the body's error.
#include <array>
#include <exception>
#include <utility>

#include "async/async_call.h"
#include "resilience/timeout_call.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"
#include "weave/error.h"

#if defined(WEAVE_ASIO_STANDALONE)
#  include <asio/experimental/deferred.hpp>
#  include <asio/experimental/parallel_group.hpp>
#  include <asio/strand.hpp>
#else
#  include <boost/asio/deferred.hpp>
#  include <boost/asio/experimental/parallel_group.hpp>
#  include <boost/asio/strand.hpp>
#endif

namespace WEAVE_NAMESPACE::detail {
namespace {

#if defined(WEAVE_ASIO_STANDALONE)
constexpr auto& deferred = ::asio::experimental::deferred;  // (out of experimental since Asio 1.24)
#else
constexpr auto& deferred = ::boost::asio::deferred;
#endif

class AsyncTimeoutInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const ParsedTimeout& p = *inv.prepared<ParsedTimeout>();
    const net::any_io_executor ex = co_await net::this_coro::executor;
    // The child and the timer on one strand: the timer's handler cancels the
    // child, which must not be running on another thread of the io_context
    // then (a cancellation slot is not thread-safe).
    const net::strand<net::any_io_executor> strand = net::make_strand(ex);
    net::steady_timer deadline(strand, p.after);
    // (named, not temporaries across the co_await: docs/async.md, g++ 12)
    net::awaitable<void> rest = inv.proceed();
    auto body = net::co_spawn(strand, std::move(rest), deferred);
    auto timer = deadline.async_wait(deferred);
    auto group = net::experimental::make_parallel_group(std::move(body), std::move(timer));
    // (the group waits for both: the child has unwound when it completes)
    auto [order, body_error, timer_error] =
        co_await std::move(group).async_wait(net::experimental::wait_for_one(), net::use_awaitable);
    if (order[0] == 1 && !timer_error) {  // the deadline came first
      if (!body_error) throw TimeoutExceeded(std::string(inv.method()), p.after);
      try {
        std::rethrow_exception(body_error);
      } catch (...) {
        std::throw_with_nested(TimeoutExceeded(std::string(inv.method()), p.after));
      }
    }
    if (body_error) std::rethrow_exception(body_error);
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_timeout keeps this object in a static link (REGISTERS
// in src/CMakeLists.txt).
extern "C" const char weave_link_asio_timeout = 0;

namespace {
[[maybe_unused]] const bool async_timeout_registered = [] {
  detail::register_async_builtin<detail::AsyncTimeoutInterceptor>("timeout");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
