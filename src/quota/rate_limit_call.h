// One [[rate_limit]] call's admission, shared by the blocking interceptor
// (rate_limit_interceptor.cpp) and the suspending one (src/quota/asio/):
//
//   const ParsedRateLimit& p = *inv.prepared<ParsedRateLimit>();   // read once per method
//   RateAdmission a = admit(p, p.key(inv));    // a store call; throws RateLimited per on_limit
//   if (a.skip) return;                        // on_limit=skip: the proxy says what the call returns
//   sleep a.wait (the turn the store gave), then proceed.
#pragma once

#include <chrono>
#include <memory>
#include <string_view>

#include "quota/call_key.h"
#include "quota/quota_runtime.h"
#include "weave/annotation.h"
#include "weave/invocation.h"
#include "weave/rate_limit.h"

namespace WEAVE_NAMESPACE::detail {

enum class OnLimit { fail, wait, skip };  // the vocabulary's throw, wait, skip

// What [[rate_limit(...)]] says (annotations/rate_limit.json gives the
// defaults of arguments not written).
struct ParsedRateLimit {
  RateLimit limit;
  OnLimit on_limit = OnLimit::fail;
  std::chrono::milliseconds wait{0};  // on_limit=wait: how far off a turn may be
  bool allow_on_store_error = false;
  CallKey key;
  RateSeries* series = nullptr;  // the metrics of the key template (or of the fixed key)

  // Throws UsageError for a value outside the vocabulary or a limit out of
  // range (the chain names the method).
  static std::shared_ptr<const ParsedRateLimit> parse(const AnnotationSpec& spec);
};

struct RateAdmission {
  bool skip = false;                  // on_limit=skip and over the rate: do not run the method
  std::chrono::microseconds wait{0};  // run it after this wait (the turn the store gave)
};

// The decision for one call on the process-wide quota store: admitted (with
// the turn to wait for), skipped, or RateLimited thrown. A store failure is
// thrown, or with on_store_error=allow reported (event quota_error) and
// admitted at once.
RateAdmission admit(const ParsedRateLimit& p, std::string_view key);

}  // namespace weave::detail
