// What [[circuit_breaker(...)]] says, read once per method: the process-wide
// breaker of its name and what a refused call does. Shared by the blocking
// interceptor (circuit_breaker_interceptor.cpp) and the one of asynchronous
// methods (src/resilience/asio/async_circuit_breaker.cpp).
#pragma once

#include <exception>
#include <memory>

#include "weave/annotation.h"
#include "weave/circuit_breaker.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedCircuitBreaker {
  CircuitBreaker breaker;
  bool skip_when_open = false;
  ExceptionMatcher record_on = nullptr, ignore_on = nullptr;  // `record_on=`, `ignore_on=`
  explicit ParsedCircuitBreaker(CircuitBreaker b) : breaker(std::move(b)) {}
  // Throws UsageError for values out of range or a name given another
  // policy elsewhere (the chain names the method).
  static std::shared_ptr<const ParsedCircuitBreaker> parse(const AnnotationSpec& spec);
  // Ends `pass` as an exception `e` from the rest of the call says: nothing
  // (ignore_on), a success (not of record_on), else a failure.
  void end_with(CircuitPass& pass, const std::exception_ptr& e) const noexcept {
    if (ignore_on && ignore_on(e)) return;  // (the pass ends counting nothing)
    if (record_on && !record_on(e)) pass.succeeded();
    else pass.failed();
  }
  // A refused call: throws CircuitOpen, unless it is skipped (returns).
  void refused() const {
    if (!skip_when_open) throw CircuitOpen(breaker.name(), breaker.retry_after());
  }
};

}  // namespace weave::detail
