// The asynchronous chain: AsyncCallSite (what an asynchronous proxy
// awaits), AsyncInvocation::proceed, and the chain's asynchronous view.
#include <cstddef>
#include <mutex>
#include <new>
#include <unordered_map>

#include "async/async_call.h"
#include "async/sync_interceptor.h"
#include "core/process.h"
#include "weave/asio.h"
#include "weave/generated/invoke_async.h"

namespace WEAVE_NAMESPACE {
namespace detail {
namespace {

AsyncChain make_async_chain(const Chain& chain) {
  AsyncChain made;
  const std::size_t n = chain.interceptors.size();
  made.async.resize(n, nullptr);
  made.upto.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    made.async[i] = dynamic_cast<AsyncInterceptor*>(chain.interceptors[i]);
    const auto* builtin = dynamic_cast<const AsyncBuiltin*>(made.async[i]);
    if (made.async[i] && !builtin) continue;
    auto upto = std::make_unique<Chain>();
    upto->interceptors.assign(chain.interceptors.begin(), chain.interceptors.begin() + static_cast<std::ptrdiff_t>(i + 1));
    upto->prepared.assign(chain.prepared.begin(), chain.prepared.begin() + static_cast<std::ptrdiff_t>(i + 1));
    if (builtin) upto->interceptors.back() = &builtin->blocking();
    made.upto[i] = std::move(upto);
  }
  return made;
}

struct AsyncChains {
  Mutex mutex;
  // Chains are never freed (core/interceptor_registry.cpp): neither are these.
  std::unordered_map<const Chain*, std::unique_ptr<const AsyncChain>> by_chain WEAVE_GUARDED_BY(mutex);
};

const AsyncChain& async_chain_of(const Chain& chain) {
  thread_local const Chain* last_chain = nullptr;
  thread_local const AsyncChain* last = nullptr;
  if (last_chain == &chain) return *last;
  AsyncChains& all = fork_guarded<AsyncChains>();
  Guard lock(all.mutex);
  auto& slot = all.by_chain[&chain];
  if (!slot) slot = std::make_unique<const AsyncChain>(make_async_chain(chain));
  last_chain = &chain;
  last = slot.get();
  return *slot;
}

[[gnu::cold]] std::exception_ptr proceeded_twice(const Invocation& inv) {
  return std::make_exception_ptr(
      UsageError("proceed() awaited again after " + std::string(inv.method()) + " returned"));
}

}  // namespace

AsyncCall::AsyncCall(const MethodInfo& info, std::span<const ArgRef> args, std::span<const std::string> rendered,
                     void* result_slot, const Chain& chain, const AsyncChain& async_chain, AsyncTarget target,
                     void* target_ctx)
    : inv(info, args, rendered, nullptr, nullptr, result_slot),
      view(AsyncCallAccess::view(inv, this)),
      chain(&chain),
      async_chain(&async_chain),
      target(target),
      target_ctx(target_ctx) {
  InvocationAccess::set_up(inv, chain, nullptr);
}

namespace {

// An interceptor's level of the call: the next interceptor, at the level
// after it. With `caught`, an exception is left there instead of thrown
// (proceed_before_cleanup).
net::awaitable<void> next_interceptor(AsyncCall& call, std::size_t depth, std::exception_ptr* caught) {
  Invocation& inv = call.inv;
  struct Leave {
    Invocation& inv;
    std::size_t depth;
    ~Leave() { InvocationAccess::at_level(inv, depth); }
  };
  try {
    const Leave leave{inv, depth};
    InvocationAccess::at_level(inv, depth + 1);
    if (AsyncInterceptor* next = call.async_chain->async[depth])
      co_await next->around_async(call.view);
    else
      co_await run_sync_interceptor(call, depth);
  } catch (...) {
    if (!caught) throw;
    *caught = std::current_exception();
  }
  if (!caught) co_return;
  // Whether the rest returned or threw, a cancellation left pending is reset
  // in this frame, as await_target does (weave/generated/invoke_async.h).
  const net::cancellation_state state = co_await net::this_coro::cancellation_state;
  if (state.cancelled() != net::cancellation_type::none)
    co_await net::this_coro::reset_cancellation_state();
}

// `error`, thrown where the rest of the call is awaited (or left in `caught`).
net::awaitable<void> thrown_at_await(std::exception_ptr error, std::exception_ptr* caught) {
  if (!caught) std::rethrow_exception(error);
  *caught = std::move(error);
  co_return;
}

// The rest of the call from its running level: the next interceptor, or
// the method, whose own frame (await_target) ends the call's level without
// one more (each frame is a suspension and a resumption through asio's pump).
net::awaitable<void> rest_of_call(AsyncCall& call, std::exception_ptr* caught) {
  Invocation& inv = call.inv;
  if (inv.proceeded()) return thrown_at_await(proceeded_twice(inv), caught);
  const std::size_t depth = InvocationAccess::depth(inv);
  if (depth == call.chain->interceptors.size()) return call.target(call.target_ctx, TargetEnd{&call, caught});
  return next_interceptor(call, depth, caught);
}

// A synchronous method's call (AsyncInterceptor::around): the rest runs here.
net::awaitable<void> rest_of_sync_call(Invocation& inv, std::exception_ptr* caught) {
  try {
    inv.proceed();
  } catch (...) {
    if (!caught) throw;
    *caught = std::current_exception();
  }
  co_return;
}

// The whole call from its first level: the first interceptor's around_async
// itself when it has one (a frame less than rest_of_call's).
net::awaitable<void> first_step(AsyncCall& call) {
  if (AsyncInterceptor* first = call.async_chain->async[0]) {
    InvocationAccess::at_level(call.inv, 1);
    return first->around_async(call.view);
  }
  return rest_of_call(call, nullptr);
}

}  // namespace

net::awaitable<void> proceed_async(AsyncCall& call) { return rest_of_call(call, nullptr); }

net::awaitable<void> proceed_before_cleanup(AsyncInvocation& inv, std::exception_ptr& error) {
  if (AsyncCall* call = AsyncCallAccess::call(inv)) return rest_of_call(*call, &error);
  return rest_of_sync_call(AsyncCallAccess::invocation(inv), &error);
}

bool is_operation_aborted(const std::exception_ptr& e) noexcept {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const net::system_error& se) {
    return se.code() == net::error::operation_aborted;
  } catch (...) {
    return false;
  }
}

void target_returned(TargetEnd end) noexcept {
  if (end.call) InvocationAccess::set_done(static_cast<AsyncCall*>(end.call)->inv);
}

// What asio's type-erased executor keeps inline (any_executor's object_type).
static_assert(sizeof(ContextExecutor<net::io_context::executor_type>) <=
                  sizeof(std::shared_ptr<void>) + sizeof(void*),
              "ContextExecutor over an io_context: too large to live inside an any_io_executor");

static_assert(sizeof(AsyncCall) <= AsyncCallSite::call_size && alignof(AsyncCall) <= alignof(std::max_align_t),
              "AsyncCallSite::call_size: too small for an AsyncCall");

AsyncCallSite::AsyncCallSite(const MethodInfo& info, std::span<const ArgRef> args,
                             std::span<const std::string> rendered, AsyncTarget target, void* target_ctx,
                             void* result_slot) {
  const Chain& chain = resolve_chain(info);
  if (chain.interceptors.empty()) return;
  auto* call = new (call_) AsyncCall(info, args, rendered, result_slot, chain, async_chain_of(chain), target, target_ctx);
  made_ = true;
  // The call runs as a coroutine of its own on the caller's executor,
  // wrapped to install its context at every resumption; it starts from the
  // context the caller runs in (a woven caller's: reentrancy).
  call->cell = CallCell::acquire();
  call->generation = call->cell->begin(context_head());
}

AsyncCallSite::~AsyncCallSite() {
  if (!made_) return;
  auto* call = std::launder(reinterpret_cast<AsyncCall*>(call_));
  if (call->forward.is_connected()) call->forward.clear();
  if (call->cell) CallCell::retire(std::move(call->cell));
  call->~AsyncCall();
}

net::awaitable<void> AsyncCallSite::spawn(const net::any_io_executor& caller,
                                          net::cancellation_slot caller_slot) {
  AsyncCall& call = *std::launder(reinterpret_cast<AsyncCall*>(call_));
  // An io_context's executor is wrapped as itself: small enough to live
  // inside the type-erased executor (no allocation, no shared count per copy).
  // A woven caller's executor is unwrapped (a nested call): its handlers
  // install this call's context, which starts from the caller's, and the
  // caller's own wrapper reinstalls the caller's when it resumes.
  const net::io_context::executor_type* io = caller.target<net::io_context::executor_type>();
  if (const auto* woven = caller.target<ContextExecutor<net::io_context::executor_type>>()) io = &woven->inner();
  if (io) {
    call.executor = ContextExecutor<net::io_context::executor_type>(*io, call.cell.get(), call.generation);
    call.cell->bind(io->context());
  } else {
    call.executor = ContextExecutor<net::any_io_executor>(caller, call.cell.get(), call.generation);
    call.cell->bind(call.executor);
  }
  // Cancelled through its cell (a lost lease, from any thread); the
  // caller's cancellation goes the same way.
  call.forward = caller_slot;
  if (call.forward.is_connected())
    call.forward.assign([cell = call.cell.get(), gen = call.generation](net::cancellation_type type) {
      cell->cancel(gen, type, /*loss=*/false);
    });
  return net::co_spawn(call.executor, first_step(call),
                       net::bind_cancellation_slot(call.cell->slot(), net::use_awaitable));
}

bool AsyncCallSite::ran() const noexcept {
  return std::launder(reinterpret_cast<const AsyncCall*>(call_))->inv.proceeded();
}

}  // namespace detail

net::awaitable<void> AsyncInvocation::proceed() {
  if (!call_) return detail::rest_of_sync_call(*inv_, nullptr);
  return detail::proceed_async(*call_);
}

}  // namespace weave
