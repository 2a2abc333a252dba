// The `semaphore` interceptor of asynchronous methods: the blocking one's
// steps (quota/permit_attempt.h) with the wait for a permit a suspension:
// woken by a release (ChangeWaiter::wake_on_change) or at the time to ask
// again, holding no thread. Store calls run on the store pool (mem://:
// inline). The permit is given back from the store pool as the call ends.
// A call cancelled while it waits leaves the line, and one cancelled once
// granted gives its permit back, as its frame is destroyed (one store call
// on the thread that destroys it).
#include <chrono>
#include <exception>
#include <memory>
#include <optional>

#include "async/async_call.h"
#include "async/blocking_pool.h"
#include "async/wakeup.h"
#include "core/call_context.h"
#include "quota/held_permit.h"
#include "quota/permit_attempt.h"
#include "quota/quota_runtime.h"
#include "quota/semaphore_call.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class AsyncSemaphoreInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const ParsedSemaphore& p = *inv.prepared<ParsedSemaphore>();
    // A shared reference, not a QuotaRuntimeRef: that one counts on its thread.
    const std::shared_ptr<QuotaRuntime> rt = quota_runtime_slot().get();
    const bool in_process = rt->semaphores().in_process();
    PermitAttempt a(*rt, p.key(AsyncCallAccess::invocation(inv)), p.spec, *p.series);
    PermitWaiter* waiter = nullptr;  // (a subscription on Redis: made before the first step)
    if (a.waits()) waiter = co_await store_call(in_process, [&a] { return &a.prepare_wait(PermitAttempt::WaitOn::callback); });
    Permit permit;
    for (;;) {
      std::optional<PermitAttempt::Clock::time_point> again;
      permit = co_await store_call(in_process, [&a, &again] { return a.step(again); });
      if (permit || !again) break;
      co_await wait_for_change(*waiter, *again);
    }
    if (!permit) {
      p.busy(a);  // throws, unless the call is skipped
      co_return;
    }
    std::exception_ptr error;
    {
      ContextPush in_context(HeldPermit::of(permit).context_link(context_head()));
      co_await proceed_before_cleanup(inv, error);
    }
    // Given back off the io thread; a failure is counted and reported, never
    // thrown over the call's result.
    co_await store_call(in_process, [&permit] { Permit done = std::move(permit); });
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_semaphore keeps this object in a static link
// (REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_asio_semaphore = 0;

namespace {
[[maybe_unused]] const bool async_semaphore_registered = [] {
  detail::register_async_builtin<detail::AsyncSemaphoreInterceptor>("semaphore");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
