// The `dedupe` interceptor of asynchronous methods: the blocking
// interceptor's steps (src/dedupe/dedupe_call.h) driven by suspension. A
// duplicate waiting for a running first call is suspended and woken by the
// first call's finish (ClaimWaiter::wake_on_change), its deadline or its
// cancellation; store calls run on the store pool (mem:// inline). The first
// call's claim is in the call's context while the rest of the call runs.
#include <boost/asio/awaitable.hpp>
#include <exception>
#include <memory>

#include "async/async_call.h"
#include "async/blocking_pool.h"
#include "async/wakeup.h"
#include "dedupe/dedupe_call.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

namespace asio = boost::asio;

class AsyncDedupeInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  asio::awaitable<void> around_async(AsyncInvocation& inv) override {
    // A shared reference, not a DedupeRuntimeRef: that one counts on its thread.
    const std::shared_ptr<DedupeRuntime> rt = dedupe_runtime();
    DedupeCall call(AsyncCallAccess::invocation(inv), *rt);
    const bool in_process = call.in_process();
    // 1. claim, or answer as a duplicate (waiting, suspended, for a running first call)
    co_await store_call(in_process, [&call] { call.prepare_wait(); });
    for (;;) {
      const DedupeCall::Step step = co_await store_call(in_process, [&call] { return call.claim_once(); });
      if (step.kind == DedupeCall::Step::answered) co_return;
      if (step.kind == DedupeCall::Step::first) break;
      if (call.waiter()) co_await wait_for_change(*call.waiter(), step.until);
    }
    // 2. the first call, under its claim (renewed), in the call's context
    const std::shared_ptr<HeldClaim> held = call.hold();
    struct Release {
      DedupeCall& call;
      HeldClaim& held;
      ~Release() { call.release(held); }
    } release{call, *held};
    std::exception_ptr error;
    {
      ContextPush in_context(held->context_link(context_head()));
      error = co_await proceed_before_cleanup(inv);
    }
    if (error) {
      co_await store_call(in_process, [&] { call.failed(error, *held); });
      std::rethrow_exception(error);
    }
    // 3. the outcome
    co_await store_call(in_process, [&] { call.succeeded(*held); });
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// cmake/link/weave_link_asio.cpp keeps this object in a static link.
extern "C" WEAVE_API const char weave_link_asio_dedupe = 0;

namespace {
[[maybe_unused]] const bool async_dedupe_registered = [] {
  detail::register_async_builtin<detail::AsyncDedupeInterceptor>("dedupe");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
