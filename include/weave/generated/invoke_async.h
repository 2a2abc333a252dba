// weave/generated/invoke_async.h — what an asynchronous woven method's body
// calls: co_return co_await detail::invoke_async<Task>(info, args, rendered,
// target, on_skip) runs the chain of `info` around `target` (which returns the
// method's own task) as coroutines, and gives back the result (or what the
// method's skip rule says: on_skip returns the value, or a task of it, as a
// fallback method does). Generated code's ABI, like weave/generated/invoke.h.
// No temporary with a destructor stands in a co_await expression here: g++ 12
// destroys such temporaries twice.
#pragma once

#include "weave/abi.h"
#include "weave/asio.h"

#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "weave/async_task.h"
#include "weave/generated/invoke.h"
#include "weave/generated/method_info.h"

namespace WEAVE_NAMESPACE::detail {

// What the method's end tells the chain: `call`, the call's state, is
// marked done when the method returned (null: a call with no interceptors),
// and `caught`, when an interceptor asked for it (it makes store calls after
// the method), takes the method's exception instead of a throw.
struct TargetEnd {
  void* call = nullptr;
  std::exception_ptr* caught = nullptr;
};
using AsyncTarget = net::awaitable<void> (*)(void* target_ctx, TargetEnd end);

// One call's chain, kept in the proxy's coroutine frame (no allocation, no
// frame of its own): `target(target_ctx, end)` runs the method, leaving its
// result in `result_slot` (a std::optional<T>, null for void). In Weave::asio.
class WEAVE_API AsyncCallSite {
 public:
  AsyncCallSite(const MethodInfo& info, std::span<const ArgRef> args, std::span<const std::string> rendered,
                AsyncTarget target, void* target_ctx, void* result_slot);
  ~AsyncCallSite();
  AsyncCallSite(const AsyncCallSite&) = delete;
  AsyncCallSite& operator=(const AsyncCallSite&) = delete;

  // False when the method has no interceptors: the proxy awaits the target.
  bool intercepted() const noexcept { return made_; }
  // The call as a coroutine of its own on the caller's executor, cancelled
  // through its own slot, which the caller's cancellation (`caller_slot`)
  // reaches too. Lazy: it starts when awaited.
  net::awaitable<void> spawn(const net::any_io_executor& caller,
                             net::cancellation_slot caller_slot);
  // Once it ended: true when the method ran or an interceptor completed the
  // call, false when one skipped it.
  bool ran() const noexcept;

  static constexpr std::size_t call_size = 320;

 private:
  alignas(std::max_align_t) unsigned char call_[call_size];
  bool made_ = false;
};
// The method returned: its call is done.
WEAVE_API void target_returned(TargetEnd end) noexcept;

// The chain's target: the method, awaited in this one frame (each frame more
// is a suspension and a resumption through asio's pump).
template <class Traits, class Ctx>
net::awaitable<void> await_target(void* p, TargetEnd end) {
  auto* c = static_cast<Ctx*>(p);
  std::exception_ptr error;
  try {
    auto task = Traits::to_awaitable((*c->target)());
    if constexpr (std::is_void_v<typename Traits::value_type>)
      co_await std::move(task);
    else
      c->value.emplace(co_await std::move(task));
  } catch (...) {
    if (!end.caught) throw;
    error = std::current_exception();
  }
  if (!error) target_returned(end);
  if (!end.caught) co_return;
  if (error) *end.caught = std::move(error);
  // The method ended, and an interceptor's store calls come next. A
  // cancellation it took or swallowed, or one that came once its last
  // operation had completed (so it cancelled nothing), is reset here, in
  // this frame: a co_await in a cancelled coroutine throws at once (a
  // coroutine awaited to reset it too), and would skip those store calls.
  const net::cancellation_state state = co_await net::this_coro::cancellation_state;
  if (state.cancelled() != net::cancellation_type::none)
    co_await net::this_coro::reset_cancellation_state();
}

// The target's context: the method to call, and where its result goes.
template <class Target, class T>
struct TargetCtx {
  Target* target;
  std::optional<T> value;
  void* result_slot() noexcept { return &value; }
};
template <class Target>
struct TargetCtx<Target, void> {
  Target* target;
  struct None {
  } value;  // (so that one initializer serves both)
  void* result_slot() noexcept { return nullptr; }
};

template <class Task, class Target, class OnSkip>
net::awaitable<typename async_task_traits<Task>::value_type> run_async(const MethodInfo& info,
                                                                              std::span<const ArgRef> args,
                                                                              std::span<const std::string> rendered,
                                                                              Target& target, OnSkip& on_skip) {
  using Traits = async_task_traits<Task>;
  using T = typename Traits::value_type;
  static_assert(!std::is_reference_v<T>, "weave: an asynchronous method returns its result by value");
  using Ctx = TargetCtx<Target, T>;
  Ctx ctx{&target, {}};
  AsyncCallSite site(info, args, rendered, &await_target<Traits, Ctx>, &ctx, ctx.result_slot());
  bool ran = true;
  if (!site.intercepted()) {
    auto method = await_target<Traits, Ctx>(&ctx, TargetEnd{});
    co_await std::move(method);
  } else {
    const net::any_io_executor caller = co_await net::this_coro::executor;
    const net::cancellation_state caller_state = co_await net::this_coro::cancellation_state;
    auto call = site.spawn(caller, caller_state.slot());
    co_await std::move(call);
    ran = site.ran();
  }
  constexpr bool cannot_skip = std::is_same_v<std::remove_cvref_t<OnSkip>, CannotSkip>;
  if constexpr (std::is_void_v<T>) {
    if (ran) co_return;
    if constexpr (cannot_skip) throw_cannot_skip(info);
    else if constexpr (std::is_same_v<decltype(on_skip()), Task>) {
      auto fallback = Traits::to_awaitable(on_skip());
      co_await std::move(fallback);
    } else {
      on_skip();
    }
  } else {
    if (ran) co_return std::move(*ctx.value);
    if constexpr (cannot_skip) throw_cannot_skip(info);
    else if constexpr (std::is_same_v<decltype(on_skip()), Task>) {
      auto fallback = Traits::to_awaitable(on_skip());
      co_return co_await std::move(fallback);
    } else {
      co_return on_skip();
    }
  }
}

template <class Task, class Target, class OnSkip>
Task invoke_async(const MethodInfo& info, std::span<const ArgRef> args, std::span<const std::string> rendered,
                  Target&& target, OnSkip&& on_skip) {
  return async_task_traits<Task>::from_awaitable(run_async<Task>(info, args, rendered, target, on_skip));
}

}  // namespace weave::detail
