// What [[retry(...)]] says, read once per method into a RetryPolicy
// (weave/retry.h), shared by the blocking interceptor
// (retry_interceptor.cpp) and the one of asynchronous methods
// (src/resilience/asio/async_retry.cpp).
#pragma once

#include <memory>

#include "weave/annotation.h"
#include "weave/retry.h"

namespace WEAVE_NAMESPACE::detail {

// Throws UsageError for values out of range (the chain names the method).
std::shared_ptr<const RetryPolicy> parse_retry(const AnnotationSpec& spec);

}  // namespace weave::detail
