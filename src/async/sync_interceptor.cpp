#include "async/sync_interceptor.h"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
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
  call.cell->store(context_head());
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  boost::asio::co_spawn(call.executor, proceed_async(call), [&done](std::exception_ptr error) {
    if (error)
      done.set_exception(error);
    else
      done.set_value();
  });
  finished.get();  // the rest's exception, for the interceptor to see
}

// Runs `job` on the blocking pool and resumes the awaiting coroutine on its
// own executor; rethrows what the job threw.
template <class Job>
boost::asio::awaitable<void> on_blocking_pool(Job& job) {
  std::exception_ptr error;
  co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
      [&job, &error](auto handler) {
        // The caller's executor counts this work as outstanding: its
        // io_context's run() does not return while the job runs.
        auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler),
                                        boost::asio::execution::outstanding_work.tracked);
        // (std::function wants a copyable job: the move-only handler is shared.)
        auto resume = std::make_shared<decltype(handler)>(std::move(handler));
        run_blocking([&job, &error, resume, work = std::move(work)] {
          try {
            job();
          } catch (...) {
            error = std::current_exception();
          }
          boost::asio::post(work, [resume] { std::move (*resume)(); });
        });
      },
      boost::asio::use_awaitable);
  if (error) std::rethrow_exception(error);
}

}  // namespace

boost::asio::awaitable<void> run_sync_interceptor(AsyncCall& call, std::size_t depth) {
  Rest rest{&call};
  // The interceptor's own Invocation: the chain up to it, whose end runs the
  // rest of this call.
  Invocation inv(InvocationAccess::method(call.inv), call.inv.args(), InvocationAccess::rendered(call.inv),
                 &run_rest_and_wait, &rest, InvocationAccess::result_slot(call.inv));
  InvocationAccess::set_up(inv, *call.async_chain->upto[depth], nullptr);
  InvocationAccess::at_level(inv, depth);
  // The interceptor runs in the call's context, as on the caller's thread.
  const std::shared_ptr<const ContextLink> outer = context_head();
  auto job = [&inv, &outer] {
    const CallContext::Scope in_call(CallContextAccess::make(outer));
    inv.proceed();
  };
  std::exception_ptr error;
  try {
    co_await on_blocking_pool(job);
  } catch (...) {
    error = std::current_exception();
  }
  context_head() = outer;  // what it pushed ended with it (the cell follows at this handler's end)
  if (error) std::rethrow_exception(error);
  // Completed by the interceptor itself (complete_from_json), not by the method.
  if (inv.proceeded() && !call.inv.proceeded()) InvocationAccess::set_done(call.inv);
}

}  // namespace detail

void AsyncInterceptor::around(Invocation& inv) {
  boost::asio::io_context io;
  AsyncInvocation view = detail::AsyncCallAccess::view(inv, nullptr);
  std::exception_ptr error;
  boost::asio::co_spawn(io, around_async(view), [&error](std::exception_ptr e) { error = e; });
  io.run();
  if (error) std::rethrow_exception(error);
}

namespace {
class FunctionAsyncInterceptor final : public AsyncInterceptor {
 public:
  explicit FunctionAsyncInterceptor(std::function<boost::asio::awaitable<void>(AsyncInvocation&)> f)
      : f_(std::move(f)) {}
  boost::asio::awaitable<void> around_async(AsyncInvocation& inv) override { return f_(inv); }

 private:
  std::function<boost::asio::awaitable<void>(AsyncInvocation&)> f_;
};
}  // namespace

void add_async_interceptor(InterceptorRegistry& registry, std::string annotation,
                           std::function<boost::asio::awaitable<void>(AsyncInvocation&)> around) {
  if (!around) throw UsageError("empty function for annotation '" + annotation + "'");
  registry.add(std::move(annotation), std::make_shared<FunctionAsyncInterceptor>(std::move(around)));
}

}  // namespace weave
