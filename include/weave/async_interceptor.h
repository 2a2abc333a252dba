// weave/async_interceptor.h — interceptors that wait by suspending: an
// around() that can co_await the rest of the chain.
//
//   class Timed final : public weave::AsyncInterceptor {
//     weave::net::awaitable<void> around_async(weave::AsyncInvocation& inv) override {
//       auto t0 = std::chrono::steady_clock::now();
//       co_await inv.proceed();                        // the next interceptor, then the method
//       record(inv.method(), std::chrono::steady_clock::now() - t0);
//     }
//   };
//   weave::InterceptorRegistry::global().add("timed", std::make_shared<Timed>());
//
// On an asynchronous method (weave/async_task.h) around_async() runs on the
// caller's executor; on a synchronous one the same coroutine runs to its end
// on the calling thread (around()'s default), so one interceptor serves both.
//
// A plain weave::Interceptor on an asynchronous method works too, with its
// whole meaning: its around() runs on a thread of Weave's blocking pool, and
// its proceed() blocks that thread (not the caller's executor) until the rest
// of the chain and the method finished, so it sees the result and the
// exception as on a synchronous method. That costs a thread per call in
// flight: write interceptors of asynchronous methods as AsyncInterceptors.
#pragma once

#include "weave/abi.h"
#include "weave/asio.h"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "weave/interceptor.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE {

namespace detail {
struct AsyncCall;  // src/async
struct AsyncCallAccess;
}  // namespace detail

// One call through a woven method, as asynchronous interceptors see it: what
// weave::Invocation answers, and a proceed() to co_await.
class WEAVE_API AsyncInvocation {
 public:
  AsyncInvocation(const AsyncInvocation&) = delete;
  AsyncInvocation& operator=(const AsyncInvocation&) = delete;

  std::string_view method() const noexcept { return inv_->method(); }
  std::string_view file() const noexcept { return inv_->file(); }
  int line() const noexcept { return inv_->line(); }
  std::size_t arg_count() const noexcept { return inv_->arg_count(); }
  std::span<const ArgRef> args() const noexcept { return inv_->args(); }
  const ArgRef& arg(std::size_t i) const { return inv_->arg(i); }
  std::string_view arg_name(std::size_t i) const { return inv_->arg_name(i); }
  const Annotation& annotation() const { return inv_->annotation(); }
  template <class T>
  const T* prepared() const noexcept {
    return inv_->prepared<T>();
  }

  // Runs the next interceptor, or the method itself after the last one, and
  // resumes once it finished. Exceptions from the method pass through.
  // Awaiting it again after the method returned is a UsageError.
  net::awaitable<void> proceed();
  bool proceeded() const noexcept { return inv_->proceeded(); }
  // True when the method is asynchronous (it returns a task); false when this
  // interceptor runs on a synchronous method (proceed() then runs the rest
  // of the chain on the calling thread).
  bool asynchronous() const noexcept { return call_ != nullptr; }

  // Results, as Invocation's (weave/invocation.h).
  const ResultCodec* result_codec() const noexcept { return inv_->result_codec(); }
  const void* result() const noexcept { return inv_->result(); }
  void complete_from_json(std::string_view json) { inv_->complete_from_json(json); }
  void complete_from_shared(const void* value) { inv_->complete_from_shared(value); }

 private:
  friend struct detail::AsyncCallAccess;
  AsyncInvocation(Invocation& inv, detail::AsyncCall* call) noexcept : inv_(&inv), call_(call) {}
  Invocation* inv_;
  detail::AsyncCall* call_;  // null: a synchronous method's call
};

class WEAVE_API AsyncInterceptor : public Interceptor {
 public:
  // Do work, co_await inv.proceed() (or not, to skip the method), do work.
  virtual net::awaitable<void> around_async(AsyncInvocation& inv) = 0;
  // A synchronous method's call: around_async() run to its end on this thread.
  void around(Invocation& inv) override;
};

// Binds `annotation` to an asynchronous around written as a function.
WEAVE_API void add_async_interceptor(InterceptorRegistry& registry, std::string annotation,
                                     std::function<net::awaitable<void>(AsyncInvocation&)> around);

}  // namespace weave
