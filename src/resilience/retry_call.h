// What [[retry(...)]] says, read once per method: a RetryPolicy
// (weave/retry.h) and whether spent runs go to a fallback. Shared by the
// blocking interceptor (retry_interceptor.cpp) and the one of asynchronous
// methods (src/resilience/asio/async_retry.cpp).
#pragma once

#include <exception>
#include <memory>

#include "weave/annotation.h"
#include "weave/retry.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedRetry {
  RetryPolicy policy;
  bool falls_back = false;  // `fallback=`: the last retried error skips to it instead of passing on
  // Throws UsageError for values out of range (the chain names the method).
  static std::shared_ptr<const ParsedRetry> parse(const AnnotationSpec& spec);
  // After the runs ended with `e`: true when the call goes to the fallback
  // (a skip) rather than passing `e` on. `proceeded`: the method itself
  // returned (an error after it is not the runs').
  bool to_fallback(const std::exception_ptr& e, bool proceeded) const noexcept {
    return falls_back && !proceeded && retries(policy, e);
  }
};

}  // namespace weave::detail
