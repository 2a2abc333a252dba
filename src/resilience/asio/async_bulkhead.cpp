// The `bulkhead` interceptor of asynchronous methods: the blocking one's
// steps with the wait for a slot a suspension (woken by the release that
// grants it, or at the deadline), holding no thread. A call cancelled while
// it waits leaves the line; one cancelled once it has its slot gives it back
// as its frame is destroyed.
#include <exception>
#include <memory>

#include "async/async_call.h"
#include "async/wakeup.h"
#include "resilience/bulkhead_call.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class AsyncBulkheadInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const ParsedBulkhead& p = *inv.prepared<ParsedBulkhead>();
    const std::shared_ptr<BulkheadState> state = p.bulkhead.state();
    // The waiter lives in this frame; a cancelled wait takes it out of line
    // before the frame goes.
    BulkheadState::Waiter w;
    auto wakeup = std::make_shared<Wakeup>();
    w.wake = [wakeup] { wakeup->notify(); };
    const bool waits = p.wait.count() > 0;
    const auto deadline = BulkheadState::Clock::now() + p.wait;
    if (!state->enter_or_queue(w, waits)) {
      struct LeaveLine {
        BulkheadState& state;
        BulkheadState::Waiter& w;
        bool done = false;
        ~LeaveLine() {
          if (!done && state.granted_or_leave(w, /*gave_up=*/true)) state.release();  // granted as it was cancelled: passed on
        }
      } leave{*state, w};
      if (waits) co_await wakeup->wait_until(deadline);
      leave.done = true;
      if (!waits || !state->granted_or_leave(w)) {
        p.full();  // throws, unless the call is skipped
        co_return;
      }
    }
    struct Slot {
      std::shared_ptr<BulkheadState> state;
      ~Slot() { state->release(); }
    } slot{state};
    co_await inv.proceed();
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_bulkhead keeps this object in a static link
// (REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_asio_bulkhead = 0;

namespace {
[[maybe_unused]] const bool async_bulkhead_registered = [] {
  detail::register_async_builtin<detail::AsyncBulkheadInterceptor>("bulkhead");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
