// weave/retry.h — run a call again when it fails with an error worth
// retrying, with exponential backoff and full jitter.
//
//   weave::RetryPolicy p{.attempts = 4, .backoff = 100ms, .max_backoff = 2s};
//   Receipt r = weave::retry(p, [&] { return psp.charge(order, cents); });
//
// [[retry(attempts=4, backoff=100ms, max_backoff=2s)]] does the same around a
// method (a synchronous one on its thread; an `awaitable` one sleeps on a
// timer, holding no thread). What is retried: a weave::Error whose
// retryable() is true (a busy lock, a store that did not answer, a rate
// limit...), or the types RetryPolicy::retry_on (`retry_on=[...]`) names;
// anything else passes on at once. After the last attempt its
// error passes on. Before attempt n + 1 the call sleeps a uniformly random
// time in [0, min(max_backoff, backoff * 2^(n - 1))] ("full jitter": callers
// that failed together do not come back together).
#pragma once

#include <chrono>
#include <exception>
#include <thread>
#include <type_traits>

#include "weave/abi.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE {

struct RetryPolicy {
  int attempts = 3;  // runs in all, the first included: 1 to 100
  std::chrono::milliseconds backoff{100};
  std::chrono::milliseconds max_backoff{2000};
  // Which errors are retried: those it says yes to (e.g.
  // &weave::error_is<std::system_error>); null: a weave::Error whose
  // retryable() is true, and nothing else.
  ExceptionMatcher retry_on = nullptr;
};

// The sleep before attempt `done` + 1, after `done` (>= 1) failed runs:
// uniformly random in [0, min(max_backoff, backoff * 2^(done - 1))].
WEAVE_API std::chrono::nanoseconds retry_delay(const RetryPolicy& p, int done);

// Whether the policy retries the error in `e`.
WEAVE_API bool retries(const RetryPolicy& p, const std::exception_ptr& e) noexcept;

// Throws UsageError for attempts outside 1 to 100, a negative backoff, a
// max_backoff under the backoff or over weave::max_duration.
WEAVE_API void check_retry_policy(const RetryPolicy& p);

namespace detail {
// retry(), asking `again()` too before each further run (the interceptor:
// not once the method itself has returned).
template <class F, class Again>
auto retry_while(const RetryPolicy& p, F& f, Again&& again) -> std::invoke_result_t<F&> {
  check_retry_policy(p);
  for (int done = 1;; ++done) {
    try {
      return f();
    } catch (...) {
      if (done >= p.attempts || !retries(p, std::current_exception()) || !again()) throw;
    }
    std::this_thread::sleep_for(retry_delay(p, done));
  }
}
}  // namespace detail

// f(), run again after a retryable weave::Error as the policy says; its
// result, or its last error.
template <class F>
auto retry(const RetryPolicy& p, F&& f) -> std::invoke_result_t<F&> {
  return detail::retry_while(p, f, [] { return true; });
}

}  // namespace weave
