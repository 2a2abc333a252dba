// What [[bulkhead(...)]] says, read once per method, shared by the blocking
// interceptor (bulkhead_interceptor.cpp) and the one of asynchronous
// methods (src/resilience/asio/):
//
//   const ParsedBulkhead& p = *inv.prepared<ParsedBulkhead>();
//   BulkheadSlot slot = p.bulkhead.try_enter(p.wait);   // (a coroutine waits on p.bulkhead.state())
//   no slot within wait: p.full() throws BulkheadFull, or the call is skipped (on_full=skip)
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include "resilience/bulkhead_state.h"
#include "weave/annotation.h"
#include "weave/bulkhead.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedBulkhead {
  explicit ParsedBulkhead(Bulkhead b) : bulkhead(std::move(b)) {}
  Bulkhead bulkhead;  // the process-wide one of the name
  std::chrono::milliseconds wait{0};
  bool skip_when_full = false;  // on_full=skip

  // Throws UsageError for a value outside the vocabulary, or a name some
  // other user made with another max (the chain names the method).
  static std::shared_ptr<const ParsedBulkhead> parse(const AnnotationSpec& spec);
  // No slot came within the wait: BulkheadFull, unless the call is skipped (returns).
  void full() const {
    if (!skip_when_full) throw BulkheadFull(bulkhead.name(), bulkhead.max(), wait);
  }
};

}  // namespace weave::detail
