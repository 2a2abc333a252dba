// weave/generated/chain.h — how a proxy runs its interceptor chain, and the
// copies of a call that run later (Invocation::detach). Generated code's ABI:
// not for hand-written code; the layout may change with WEAVE_GENERATED_REVISION.
#pragma once

#include "weave/abi.h"

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "weave/generated/method_info.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE::detail {

// A call of a woven method re-made from copies of its arguments, so that it
// can run after the caller returned (weave/generated.h makes them: weavegen
// emits a maker for methods whose annotations reload in the background).
class WEAVE_API DetachedCall {
 public:
  virtual ~DetachedCall();
  virtual std::span<const ArgRef> args() const noexcept = 0;  // views of the copies
  virtual std::span<const std::string> rendered() const noexcept = 0;
  virtual void* result_slot() noexcept = 0;  // std::optional<R>, or null
  virtual void run_target() = 0;             // the method itself, with the copies
  // The woven object the call runs on (its destructor retires it, below), or null.
  const void* owner = nullptr;
};

// How a woven method makes its DetachedCall (null maker: it cannot).
struct DetachSource {
  std::unique_ptr<DetachedCall> (*make)(const void* ctx) = nullptr;
  const void* ctx = nullptr;
};

// Queues `job` on the runtime's background thread (one per process, started
// on first use, stopped at exit; a forked child starts with none and drops
// the parent's queue). False when it is stopped: then `job` did not run.
WEAVE_API bool run_in_background(std::function<void()> job);

// Called by a woven class's destructor before its base is destroyed: refuses
// new detached calls on `owner` and waits for the queued and running ones.
WEAVE_API void retire_detached(const void* owner) noexcept;

// `result_slot`: the std::optional<R> the result goes to (null for void and
// references); the interceptors reach it through the method's ResultCodec.
// `detach`: how to copy the call (Invocation::detach), or null.
WEAVE_API bool run_chain(const MethodInfo& info, std::span<const ArgRef> args,
               std::span<const std::string> rendered, void (*target)(void*), void* ctx,
               void* result_slot = nullptr, const DetachSource* detach = nullptr);
}  // namespace weave::detail
