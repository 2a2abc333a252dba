// weave/asio.h — which Asio the async component is built on, named once:
// weave::net is Boost.Asio >= 1.81 (boost::asio), or standalone Asio >= 1.22
// (asio, Debian's libasio-dev) when WEAVE_ASIO_STANDALONE is defined. CMake
// chooses (Boost when it is found, else standalone Asio) and every target
// linking Weave::asio gets the same choice (docs/async.md).
//
//   weave::net::awaitable<int> count();           // the task type Weave weaves
//   co_await weave::net::this_coro::executor;     // the rest of Asio, as each names it
//
// Weave's own code and tests spell weave::net::X; what the two Asios spell
// differently is declared here under one name (as_tuple, error_code,
// system_error, execute). The headers below are those Weave and its tests use.
#pragma once

#include "weave/abi.h"

#if defined(WEAVE_ASIO_STANDALONE)
// Asio 1.22 looks for clang's coroutines in <experimental/coroutine> only:
// clang 14 with libstdc++ has <coroutine>. (Each asio header that needs it
// tests it: it holds unless <asio/awaitable.hpp> came before this header.)
#  if defined(__clang__) && defined(__cpp_impl_coroutine) && !defined(ASIO_HAS_CO_AWAIT)
#    define ASIO_HAS_CO_AWAIT 1
#  endif
#  include <asio/any_io_executor.hpp>
#  include <asio/associated_cancellation_slot.hpp>
#  include <asio/associated_executor.hpp>
#  include <asio/async_result.hpp>
#  include <asio/awaitable.hpp>
#  include <asio/bind_cancellation_slot.hpp>
#  include <asio/buffer.hpp>
#  include <asio/cancellation_signal.hpp>
#  include <asio/cancellation_state.hpp>
#  include <asio/cancellation_type.hpp>
#  include <asio/co_spawn.hpp>
#  include <asio/detached.hpp>
#  include <asio/error.hpp>
#  include <asio/error_code.hpp>
#  include <asio/execution.hpp>
#  include <asio/execution_context.hpp>
#  include <asio/experimental/as_tuple.hpp>
#  include <asio/io_context.hpp>
#  include <asio/post.hpp>
#  include <asio/posix/stream_descriptor.hpp>
#  include <asio/prefer.hpp>
#  include <asio/query.hpp>
#  include <asio/require.hpp>
#  include <asio/steady_timer.hpp>
#  include <asio/system_error.hpp>
#  include <asio/this_coro.hpp>
#  include <asio/use_awaitable.hpp>
#  include <asio/version.hpp>
#  if ASIO_VERSION < 102200 || !defined(ASIO_HAS_CO_AWAIT)
#    error "weave: the async component needs standalone Asio >= 1.22 (per-operation cancellation, this_coro's cancellation state)"
#  endif
#else
#  include <boost/asio/any_io_executor.hpp>
#  include <boost/asio/as_tuple.hpp>
#  include <boost/asio/associated_cancellation_slot.hpp>
#  include <boost/asio/associated_executor.hpp>
#  include <boost/asio/async_result.hpp>
#  include <boost/asio/awaitable.hpp>
#  include <boost/asio/bind_cancellation_slot.hpp>
#  include <boost/asio/buffer.hpp>
#  include <boost/asio/cancellation_signal.hpp>
#  include <boost/asio/cancellation_state.hpp>
#  include <boost/asio/cancellation_type.hpp>
#  include <boost/asio/co_spawn.hpp>
#  include <boost/asio/detached.hpp>
#  include <boost/asio/error.hpp>
#  include <boost/asio/execution.hpp>
#  include <boost/asio/execution_context.hpp>
#  include <boost/asio/io_context.hpp>
#  include <boost/asio/post.hpp>
#  include <boost/asio/posix/stream_descriptor.hpp>
#  include <boost/asio/prefer.hpp>
#  include <boost/asio/query.hpp>
#  include <boost/asio/require.hpp>
#  include <boost/asio/steady_timer.hpp>
#  include <boost/asio/this_coro.hpp>
#  include <boost/asio/use_awaitable.hpp>
#  include <boost/system/error_code.hpp>
#  include <boost/system/system_error.hpp>
#  include <boost/version.hpp>
#  if BOOST_VERSION < 108100
#    error "weave: the async component needs Boost.Asio >= 1.81 (or standalone Asio >= 1.22 with WEAVE_ASIO_STANDALONE)"
#  endif
#endif

namespace WEAVE_NAMESPACE::net {

#if defined(WEAVE_ASIO_STANDALONE)
using namespace ::asio;
using ::asio::experimental::as_tuple;  // (out of experimental since Asio 1.24)
using error_code = std::error_code;
using system_error = std::system_error;
// Runs `f` on `ex` (a member function since Asio 1.24).
template <class Executor, class F>
void execute(const Executor& ex, F&& f) {
  ::asio::execution::execute(ex, static_cast<F&&>(f));
}
#else
using namespace ::boost::asio;
using ::boost::asio::as_tuple;
using error_code = ::boost::system::error_code;
using system_error = ::boost::system::system_error;
template <class Executor, class F>
void execute(const Executor& ex, F&& f) {
  ex.execute(static_cast<F&&>(f));
}
#endif

}  // namespace weave::net
