// What [[timeout(after)]] says, read once per method, shared by the blocking
// interceptor (timeout_interceptor.cpp) and the one of asynchronous methods
// (src/resilience/asio/async_timeout.cpp).
#pragma once

#include <chrono>
#include <memory>

#include "weave/annotation.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedTimeout {
  std::chrono::milliseconds after;
  explicit ParsedTimeout(std::chrono::milliseconds a) : after(a) {}
  // Throws UsageError for an `after` out of range (the chain names the method).
  static std::shared_ptr<const ParsedTimeout> parse(const AnnotationSpec& spec);
};

}  // namespace weave::detail
