// What [[semaphore(...)]] says, read once per method, shared by the blocking
// interceptor (semaphore_interceptor.cpp) and the one of asynchronous
// methods (src/quota/asio/):
//
//   const ParsedSemaphore& p = *inv.prepared<ParsedSemaphore>();
//   PermitAttempt a(*rt, p.key(inv), p.spec, *p.series);   // then its steps (permit_attempt.h)
//   no permit within wait: p.busy(a) throws SemaphoreBusy, or the call is skipped (on_busy=skip)
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "quota/call_key.h"
#include "quota/permit_attempt.h"
#include "weave/annotation.h"
#include "weave/error.h"
#include "weave/invocation.h"
#include "weave/semaphore.h"

namespace WEAVE_NAMESPACE::detail {

struct ParsedSemaphore {
  SemaphoreSpec spec;
  bool skip_when_busy = false;  // on_busy=skip
  CallKey key;
  SemaphoreSeries* series = nullptr;  // the metrics of the key template (or of the fixed key)

  // Throws UsageError for a value outside the vocabulary (the chain names the method).
  static std::shared_ptr<const ParsedSemaphore> parse(const AnnotationSpec& spec);
  // No permit came within the wait: SemaphoreBusy, unless the call is skipped (returns).
  void busy(const PermitAttempt& a) const {
    if (!skip_when_busy) throw SemaphoreBusy(a.key(), a.permits(), a.waited());
  }
};

}  // namespace weave::detail
