// What [[circuit_breaker(...)]] says, read once per method: the process-wide
// breaker of its name and what a refused call does. Shared by the blocking
// interceptor (circuit_breaker_interceptor.cpp) and the one of asynchronous
// methods (src/resilience/asio/async_circuit_breaker.cpp).
#pragma once

#include <memory>

#include "weave/annotation.h"
#include "weave/circuit_breaker.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedCircuitBreaker {
  CircuitBreaker breaker;
  bool skip_when_open = false;
  explicit ParsedCircuitBreaker(CircuitBreaker b) : breaker(std::move(b)) {}
  // Throws UsageError for values out of range or a name given another
  // policy elsewhere (the chain names the method).
  static std::shared_ptr<const ParsedCircuitBreaker> parse(const AnnotationSpec& spec);
  // A refused call: throws CircuitOpen, unless it is skipped (returns).
  void refused() const {
    if (!skip_when_open) throw CircuitOpen(breaker.name(), breaker.retry_after());
  }
};

}  // namespace weave::detail
