// The `rate_limit` interceptor of asynchronous methods: the blocking one's
// admission (quota/rate_limit_call.h), with the wait for a call's turn a
// timer instead of a sleeping thread. On mem:// the decision is made inline,
// on Redis on the store pool. A call cancelled while it waits for its turn
// ends with operation_aborted; the turn it took stays taken (the quota is
// spent as if it had run: the limit is never exceeded).
#include <chrono>
#include <memory>

#include "async/async_call.h"
#include "async/blocking_pool.h"
#include "async/wakeup.h"
#include "quota/quota_runtime.h"
#include "quota/rate_limit_call.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class AsyncRateLimitInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const ParsedRateLimit& p = *inv.prepared<ParsedRateLimit>();
    const std::string_view key = p.key(AsyncCallAccess::invocation(inv));
    const bool in_process = quota_runtime_slot().get()->rates().in_process();
    const RateAdmission a = co_await store_call(in_process, [&p, key] { return admit(p, key); });
    if (a.skip) co_return;
    if (a.wait.count() > 0) {
      // Nobody notifies it: it ends at the turn, or with the call's cancellation.
      auto turn = std::make_shared<Wakeup>();
      co_await turn->wait_until(Wakeup::Clock::now() + a.wait);
    }
    co_await inv.proceed();
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_rate_limit keeps this object in a static link
// (REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_asio_rate_limit = 0;

namespace {
[[maybe_unused]] const bool async_rate_limit_registered = [] {
  detail::register_async_builtin<detail::AsyncRateLimitInterceptor>("rate_limit");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
