#include "async/sync_interceptor.h"

#include "weave/asio.h"
#include <exception>
#include <future>
#include <memory>

#include "async/blocking_pool.h"

namespace WEAVE_NAMESPACE {
namespace detail {
namespace {

// What the plain interceptor's proceed() reaches at the end of its chain.
struct Rest {
  AsyncCall* call;
};

void run_rest_and_wait(void* p) {
  AsyncCall& call = *static_cast<Rest*>(p)->call;
  // The rest starts from this thread's context: the call's, with what the
  // interceptor pushed (a lease it took).
  call.cell->store(call.generation, context_head());
  // The call's cancellations (a lost lease further in) go to the rest while
  // it runs: its own coroutines, bound to their own signal once spawned.
  // No emission crosses the spawn and the retarget (the rest's first
  // handler may run on an io thread before this one retargets).
  net::cancellation_signal rest_signal;
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  call.cell->hold_emissions();
  struct Retargeted {
    CallCell& cell;
    net::cancellation_signal* before;
    ~Retargeted() { cell.retarget(before); }  // (waits for an emission to rest_signal)
  } retargeted{*call.cell, call.cell->retarget(&rest_signal)};
  try {
    net::co_spawn(call.executor, proceed_async(call),
                  net::bind_cancellation_slot(rest_signal.slot(), [&done](std::exception_ptr error) {
                            if (error)
                              done.set_exception(error);
                            else
                              done.set_value();
                          }));
  } catch (...) {
    call.cell->release_emissions();
    throw;
  }
  call.cell->release_emissions();
  finished.get();  // the rest's exception, for the interceptor to see
}

}  // namespace

net::awaitable<void> run_sync_interceptor(AsyncCall& call, std::size_t depth) {
  Rest rest{&call};
  // The interceptor's own Invocation: the chain up to it, whose end runs the
  // rest of this call.
  Invocation inv(InvocationAccess::method(call.inv), call.inv.args(), InvocationAccess::rendered(call.inv),
                 &run_rest_and_wait, &rest, InvocationAccess::result_slot(call.inv));
  InvocationAccess::set_up(inv, *call.async_chain->upto[depth], nullptr);
  InvocationAccess::at_level(inv, depth);
  // The interceptor runs in the call's context, as on the caller's thread.
  const std::shared_ptr<const ContextLink> outer = context_head();
  std::exception_ptr error;
  try {
    co_await run_on(interceptor_pool(), [&inv, &outer] {
      const CallContext::Scope in_call(CallContextAccess::make(outer));
      inv.proceed();
    });
  } catch (...) {
    error = std::current_exception();
  }
  set_context_head(outer);  // what it pushed ended with it
  if (error) std::rethrow_exception(error);
  // Completed by the interceptor itself (complete_from_json), not by the method.
  if (inv.proceeded() && !call.inv.proceeded()) InvocationAccess::set_done(call.inv);
}

}  // namespace detail

void AsyncInterceptor::around(Invocation& inv) {
  net::io_context io;
  AsyncInvocation view = detail::AsyncCallAccess::view(inv, nullptr);
  std::exception_ptr error;
  net::co_spawn(io, around_async(view), [&error](std::exception_ptr e) { error = e; });
  io.run();
  if (error) std::rethrow_exception(error);
}

namespace {
class FunctionAsyncInterceptor final : public AsyncInterceptor {
 public:
  explicit FunctionAsyncInterceptor(std::function<net::awaitable<void>(AsyncInvocation&)> f)
      : f_(std::move(f)) {}
  net::awaitable<void> around_async(AsyncInvocation& inv) override { return f_(inv); }

 private:
  std::function<net::awaitable<void>(AsyncInvocation&)> f_;
};
}  // namespace

void add_async_interceptor(InterceptorRegistry& registry, std::string annotation,
                           std::function<net::awaitable<void>(AsyncInvocation&)> around) {
  if (!around) throw UsageError("empty function for annotation '" + annotation + "'");
  registry.add(std::move(annotation), std::make_shared<FunctionAsyncInterceptor>(std::move(around)));
}

}  // namespace weave
