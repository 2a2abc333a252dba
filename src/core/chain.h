// The interceptors resolved for one woven method, in annotation order.
#pragma once

#include <vector>

#include "weave/generated.h"

namespace WEAVE_NAMESPACE::detail {

struct Chain {
  std::vector<Interceptor*> interceptors;            // parallel to MethodInfo::annotations
  std::vector<std::shared_ptr<const void>> prepared;  // what each one's prepare() made
};

// The chain for `info` under the current registry contents. Cached per thread
// and per registry version; the pointer stays valid for the process lifetime.
const Chain& resolve_chain(const MethodInfo& info);

// What run_chain and detached calls set on an Invocation (its friend).
struct InvocationAccess {
  static void set_up(Invocation& inv, const Chain& chain, const DetachSource* detach) noexcept {
    inv.chain_ = &chain;
    inv.detach_ = detach;
  }
  // For the asynchronous chain (src/async), which steps through the
  // interceptors itself: the running level, entering or leaving one
  // (Invocation::at_level), and the method's completion.
  static std::size_t depth(const Invocation& inv) noexcept { return inv.depth_; }
  static void at_level(Invocation& inv, std::size_t depth) noexcept { inv.at_level(depth); }
  static void set_done(Invocation& inv) noexcept { inv.target_done_ = true; }
  static const MethodInfo& method(const Invocation& inv) noexcept { return *inv.method_; }
  static std::span<const std::string> rendered(const Invocation& inv) noexcept { return inv.rendered_; }
  static void* result_slot(const Invocation& inv) noexcept { return inv.result_slot_; }
  // `call` made a Detached that stands after interceptor `depth` - 1 of
  // `chain` (1: after the first). Empty when the call's owner is being
  // destroyed, or the process is exiting. `stored`: a stored call's replay
  // (Invocation::replaying_stored_call()). In detached.cpp.
  static Detached adopt(const MethodInfo& method, const void* chain, std::size_t depth,
                        std::unique_ptr<DetachedCall> call, bool stored);
};

}  // namespace weave::detail
