// One call of an asynchronous woven method (weave/generated/invoke_async.h):
// the Invocation it keeps its state in, the chain's asynchronous view, and
// the executor its coroutines run on, which carries the call's context.
#pragma once

#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "async/context_executor.h"
#include "core/builtin.h"
#include "core/chain.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"
#include "weave/generated/invoke_async.h"

namespace WEAVE_NAMESPACE::detail {

// A built-in interceptor made asynchronous by Weave::asio (a decorator of
// the blocking one, core/builtin.h): a synchronous method's call, and its
// prepare(), go to the blocking interceptor; an asynchronous call to
// around_async(), which drives the feature's steps by suspension.
class AsyncBuiltin : public AsyncInterceptor {
 public:
  explicit AsyncBuiltin(std::shared_ptr<Interceptor> blocking) : blocking_(std::move(blocking)) {}
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return blocking_->prepare(spec); }
  void around(Invocation& inv) override { blocking_->around(inv); }
  Interceptor& blocking() const noexcept { return *blocking_; }

 private:
  std::shared_ptr<Interceptor> blocking_;
};

// Makes built-in `annotation` an AsyncT (an AsyncBuiltin) around the blocking
// interceptor its library registers. From static initialisation.
template <class AsyncT>
void register_async_builtin(std::string_view annotation) {
  register_builtin_decorator(annotation, [](std::shared_ptr<Interceptor> blocking) {
    return std::shared_ptr<Interceptor>(std::make_shared<AsyncT>(std::move(blocking)));
  });
}

// A Chain as the asynchronous path runs it, made once per Chain.
struct AsyncChain {
  // Parallel to Chain::interceptors; null for a plain Interceptor, which runs
  // on the blocking pool (run_sync_interceptor).
  std::vector<AsyncInterceptor*> async;
  // For each plain one at i (and each AsyncBuiltin, its blocking one in its
  // place): the chain's first i + 1 interceptors, whose end is where that
  // interceptor's proceed() hands back to the coroutines.
  std::vector<std::unique_ptr<Chain>> upto;
};

struct AsyncCall {
  AsyncCall(const MethodInfo& info, std::span<const ArgRef> args, std::span<const std::string> rendered,
            void* result_slot, const Chain& chain, const AsyncChain& async_chain,
            AsyncTarget target, void* target_ctx);
  Invocation inv;  // the call's state: arguments, running level, result, done
  AsyncInvocation view;
  const Chain* chain;
  const AsyncChain* async_chain;
  AsyncTarget target;
  void* target_ctx;
  std::shared_ptr<CallCell> cell;
  std::uint64_t generation = 0;           // cell's, for this call
  net::any_io_executor executor;  // the caller's, carrying `cell`
  net::cancellation_slot forward;  // the caller's, forwarding its cancellation to `cell`
};

struct AsyncCallAccess {
  static AsyncInvocation view(Invocation& inv, AsyncCall* call) noexcept { return AsyncInvocation(inv, call); }
  static AsyncCall* call(AsyncInvocation& inv) noexcept { return inv.call_; }
  // The call's state, for a feature's steps shared with its blocking
  // interceptor (they read arguments and complete results through it).
  static Invocation& invocation(AsyncInvocation& inv) noexcept { return *inv.inv_; }
};

// The rest of the call from its running level: the next interceptor, or the
// method. What AsyncInvocation::proceed() awaits.
net::awaitable<void> proceed_async(AsyncCall& call);

// From an AsyncBuiltin that makes store calls after the rest of the call (a
// release, an outcome, a fill): the rest of the call (what inv.proceed()
// runs), leaving its exception in `error` instead of throwing it, with a
// cancellation the rest took (or swallowed) reset, since a co_await in a
// cancelled coroutine throws at once and would skip those store calls.
net::awaitable<void> proceed_before_cleanup(AsyncInvocation& inv, std::exception_ptr& error);

// True when `e` is a cancellation's error (net::system_error with
// operation_aborted): how an interceptor outside frames that reset the
// cancellation state (proceed_before_cleanup) still tells one.
bool is_operation_aborted(const std::exception_ptr& e) noexcept;

}  // namespace weave::detail
