// The built-in `dedupe` interceptor (docs/dedupe.md): claim the key in one
// step, run the method under the claim (renewed while it runs), record the
// outcome for the window; a duplicate gets the configured answer.
#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>

#include "core/builtin.h"
#include "core/feature_config.h"
#include "dedupe/dedupe_call.h"
#include "dedupe/dedupe_runtime.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE {
namespace {

class DedupeInterceptor final : public Interceptor {
 public:
  // Every call's chain runs this first (generated or written by hand); a
  // bad value fails the call, and the chain names the method.
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    return detail::DedupeSettings::parse(spec);
  }

  void around(Invocation& inv) override {
    const detail::DedupeRuntimeRef rt;
    detail::DedupeCall call(inv, *rt);
    // 1. claim, or answer as a duplicate (waiting for a running first call up to wait=)
    call.prepare_wait();
    for (;;) {
      const detail::DedupeCall::Step step = call.claim_once();
      if (step.kind == detail::DedupeCall::Step::answered) return;
      if (step.kind == detail::DedupeCall::Step::first) break;
      if (call.waiter()) call.waiter()->wait_until(step.until);
    }
    // 2. the first call: run under the claim, renewed while it runs; the body
    // sees it as weave::current_dedupe_claim()
    const std::shared_ptr<detail::HeldClaim> held = call.hold();
    struct Release {
      detail::DedupeCall& call;
      detail::HeldClaim& held;
      ~Release() { call.release(held); }
    } release{call, *held};
    try {
      detail::ContextPush in_context(held->context_link(detail::context_head()));
      inv.proceed();
    } catch (...) {
      call.failed(std::current_exception(), *held);
      throw;
    }
    // 3. record the outcome
    call.succeeded(*held);
  }
};

}  // namespace

// Registers `dedupe` with Weave::core when this library is linked:
// its static targets name weave_link_dedupe (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_dedupe = 0;

namespace {
[[maybe_unused]] const bool dedupe_registered = [] {
  detail::register_builtin_interceptor("dedupe",
                                       [] { return std::shared_ptr<Interceptor>(std::make_shared<DedupeInterceptor>()); });
  using detail::option;
  using O = DedupeOptions;
  detail::register_feature_config(detail::describe(detail::with_store_options<O>({
                                                       option("claim_lease", &O::claim_lease),
                                                       option("max_window", &O::max_window),
                                                       option("max_key_bytes", &O::max_key_bytes),
                                                   }),
                                                   &configure_dedupe));
  return true;
}();
}  // namespace

}  // namespace weave
