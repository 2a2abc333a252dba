// The `dedupe` interceptor of asynchronous methods: the blocking
// interceptor's steps (src/dedupe/dedupe_call.h) driven by suspension. A
// duplicate waiting for a running first call is suspended and woken by the
// first call's finish (ClaimWaiter::wake_on_change), its deadline or its
// cancellation. On Redis the claim and the finish are sent from the
// coroutine's own thread (DirectClaimStore's requests, sent by
// store::try_run_async), other store calls run on the store pool (mem://
// inline). The first call's claim is in the call's context while the rest
// of the call runs.
#include <exception>
#include <memory>

#include "async/async_call.h"
#include "async/blocking_pool.h"
#include "async/wakeup.h"
#include "dedupe/dedupe_call.h"
#include "dedupe/direct_claims.h"
#include "store/asio/async_run.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class AsyncDedupeInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    // A shared reference, not a DedupeRuntimeRef: that one counts on its thread.
    const std::shared_ptr<DedupeRuntime> rt = dedupe_runtime();
    DedupeCall call(AsyncCallAccess::invocation(inv), *rt);
    const bool in_process = call.in_process();
    DirectClaimStore* const direct = in_process ? nullptr : dynamic_cast<DirectClaimStore*>(&rt->store());
    // 1. claim, or answer as a duplicate (waiting, suspended, for a running
    // first call). The direct store claims first without preparing the wait
    // (a subscription), which only a running first call needs.
    if (!direct) co_await store_call(in_process, [&call] { call.prepare_wait(); });
    for (bool first_try = true;; first_try = false) {
      DedupeCall::Step step;
      if (direct && first_try)
        step = co_await claim_directly(call, *direct);
      else
        step = co_await store_call(in_process, [&call] { return call.claim_once(); });
      if (step.kind == DedupeCall::Step::answered) co_return;
      if (step.kind == DedupeCall::Step::first) break;
      if (step.kind == DedupeCall::Step::wait_prepared)
        co_await run_on(store_pool(), [&call] { call.prepare_wait(); });
      else if (call.waiter())
        co_await wait_for_change(*call.waiter(), step.until);
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
      co_await proceed_before_cleanup(inv, error);
    }
    if (error) {
      co_await store_call(in_process, [&] { call.failed(error, *held); });
      std::rethrow_exception(error);
    }
    // 3. the outcome
    if (direct)
      co_await finish_directly(call, *held, *direct);
    else
      co_await store_call(in_process, [&] { call.succeeded(*held); });
  }

 private:
  // DedupeCall::claim_once() with the claim sent from this thread.
  static net::awaitable<DedupeCall::Step> claim_directly(DedupeCall& call, DirectClaimStore& direct) {
    const DedupeCall::ClaimRequest r = call.claim_request();
    std::optional<ClaimOutcome> got;
    try {
      const std::unique_ptr<store::DirectRequest<ClaimOutcome>> claim =
          direct.direct_claim(r.key, r.owner, r.match, r.lease);
      got = co_await store::try_run_async(*claim);
      if (!got) got = co_await run_on(store_pool(), [&] { return call.runtime().store().claim(r.key, r.owner, r.match, r.lease); });
    } catch (Error& e) {
      call.claim_failed(e);
      throw;
    }
    co_return call.claimed(*got);
  }

  // DedupeCall::succeeded() with the finish sent from this thread.
  static net::awaitable<void> finish_directly(DedupeCall& call, HeldClaim& held, DirectClaimStore& direct) {
    const DedupeRecord done = call.success_record(held);
    if (!call.finish_begins(held)) co_return;
    std::optional<bool> stored;
    try {
      const std::unique_ptr<store::DirectRequest<bool>> finish =
          direct.direct_finish(held.key(), held.owner_token(), held.match(), done, call.window());
      stored = co_await store::try_run_async(*finish);
      if (!stored)
        stored = co_await run_on(store_pool(), [&] {
          return call.runtime().store().finish(held.key(), held.owner_token(), held.match(), done, call.window());
        });
    } catch (const std::exception& e) {
      call.finish_failed(held, e);
      co_return;
    } catch (...) {
      co_return;
    }
    call.finish_ends(held, *stored);
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// -u weave_link_asio_dedupe keeps this object in a static link (REGISTERS in
// src/CMakeLists.txt).
extern "C" const char weave_link_asio_dedupe = 0;

namespace {
[[maybe_unused]] const bool async_dedupe_registered = [] {
  detail::register_async_builtin<detail::AsyncDedupeInterceptor>("dedupe");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
