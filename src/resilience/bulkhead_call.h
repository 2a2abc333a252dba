// What [[bulkhead(...)]] says, read once per method, shared by the blocking
// interceptor (bulkhead_interceptor.cpp) and the one of asynchronous
// methods (src/resilience/asio/):
//
//   const ParsedBulkhead& p = *inv.prepared<ParsedBulkhead>();
//   BulkheadState::Waiter w;
//   if (!p.state->enter_or_queue(w, p.wait.count() > 0)) ... wait, then granted_or_leave(w)
//   no slot within wait: p.full() throws BulkheadFull, or the call is skipped (on_full=skip)
#pragma once

#include <chrono>
#include <memory>

#include "resilience/bulkhead_state.h"
#include "weave/annotation.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedBulkhead {
  std::shared_ptr<BulkheadState> state;  // the process-wide bulkhead of the name
  std::chrono::milliseconds wait{0};
  bool skip_when_full = false;  // on_full=skip

  // Throws UsageError for a value outside the vocabulary, or a name some
  // other user made with another max (the chain names the method).
  static std::shared_ptr<const ParsedBulkhead> parse(const AnnotationSpec& spec);
  // No slot came within the wait: BulkheadFull, unless the call is skipped (returns).
  void full() const {
    if (!skip_when_full) throw BulkheadFull(state->name(), state->max(), wait);
  }
};

}  // namespace weave::detail
