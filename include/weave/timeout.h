// weave/timeout.h — a deadline for a call: past it, the caller gets
// weave::TimeoutExceeded.
//
//   Receipt r = weave::timeout(800ms, [&] { return psp.charge(order, cents); });
//
//   // in the call, at any depth: stop at the deadline
//   for (const Row& row : rows) {
//     if (weave::current_stop_token().stop_requested()) break;
//     copy(row);
//   }
//
// [[timeout(after=800ms)]] does the same around a method. A thread cannot be
// stopped from outside, so on a synchronous call the deadline is
// cooperative: it fires the call's stop token (weave::current_stop_token(),
// weave/call_context.h), and the caller gets TimeoutExceeded once the body
// returns or throws past the deadline (a body that never looks runs to its
// end; its result is dropped). An `awaitable` method's body is cancelled at
// the deadline through Asio's cancellation (its pending co_await ends with
// operation_aborted) and the caller gets TimeoutExceeded as it unwinds.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>

#include "weave/call_context.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {

// Throws UsageError unless 0 < after <= weave::max_duration.
WEAVE_API void check_timeout(std::chrono::milliseconds after);

namespace detail {
// The scope of one deadline on this thread: while it lives, the call's stop
// token (current_stop_token()) also fires at the deadline. Blocking calls
// only (it restores this thread's context as it ends).
class WEAVE_API DeadlineScope {
 public:
  // Throws what check_timeout() throws. `name` names the call in
  // TimeoutExceeded; it must outlive the scope.
  DeadlineScope(std::chrono::milliseconds after, std::string_view name);
  ~DeadlineScope();
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;

  bool passed() const noexcept;
  // TimeoutExceeded when the deadline passed.
  void throw_if_passed() const;
  // In a catch block: TimeoutExceeded with the caught exception nested in it
  // when the deadline passed, else the caught exception again.
  [[noreturn]] void rethrow() const;

 private:
  // The deadline; or, timed by the cycle clock (start_ticks_ not 0), the
  // coarse clock's reading at the start plus after_ (never after the
  // deadline), for the end's quick check.
  std::chrono::steady_clock::time_point at_;
  std::int64_t start_ticks_ = 0;
  std::chrono::milliseconds after_;
  std::string_view name_;
  const ContextLink* pushed_;  // owned by this thread's context while it is the head
  std::shared_ptr<const ContextLink> previous_;
};
// weave::timeout() with the name TimeoutExceeded gives the call (the
// [[timeout]] interceptor's: the method's).
template <class F>
auto run_before_deadline(std::chrono::milliseconds after, std::string_view name, F& f) -> std::invoke_result_t<F&> {
  using R = std::invoke_result_t<F&>;
  const DeadlineScope scope(after, name);
  if constexpr (std::is_void_v<R>) {
    try {
      f();
    } catch (...) {
      scope.rethrow();
    }
    scope.throw_if_passed();
  } else {
    R r = [&]() -> R {
      try {
        return f();
      } catch (...) {
        scope.rethrow();
      }
    }();
    scope.throw_if_passed();
    return r;
  }
}
}  // namespace detail

// f() under a deadline `after` from now: its result when it returns in
// time; TimeoutExceeded when it returns or throws after the deadline.
template <class F>
auto timeout(std::chrono::milliseconds after, F&& f) -> std::invoke_result_t<F&> {
  return detail::run_before_deadline(after, "the call", f);
}

}  // namespace weave
