// The built-in `semaphore` interceptor: reads the annotation once, takes a
// permit of the call's key on the process-wide quota store (waiting on this
// thread), holds it in the call's context while the method runs, and gives
// it back when the method returns.
#include <string>

#include "core/builtin.h"
#include "core/call_context.h"
#include "quota/held_permit.h"
#include "quota/permit_attempt.h"
#include "quota/quota_runtime.h"
#include "quota/semaphore_call.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::semaphore;
static_assert(vocab::on_busy_values[1] == "skip");

std::shared_ptr<const ParsedSemaphore> ParsedSemaphore::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  auto p = std::make_shared<ParsedSemaphore>();
  const std::int64_t permits = a.integer("permits");
  if (permits < 1 || permits > kMaxPermits)
    throw UsageError("semaphore permits must be 1 to " + std::to_string(kMaxPermits) + ", not " + std::to_string(permits));
  p->spec.permits = static_cast<std::uint32_t>(permits);
  p->spec.wait = a.has("wait") ? a.duration("wait") : vocab::wait;
  p->skip_when_busy = (a.has("on_busy") ? a.choice("on_busy", vocab::on_busy_values) : vocab::on_busy) == 1;
  p->key = CallKey::of(a);
  p->series = &semaphore_series(p->key.label);
  return p;
}

}  // namespace detail

namespace {

class SemaphoreInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return detail::ParsedSemaphore::parse(spec); }

  void around(Invocation& inv) override {
    const detail::ParsedSemaphore& p = *inv.prepared<detail::ParsedSemaphore>();
    const detail::QuotaRuntimeRef rt;
    detail::PermitAttempt a(*rt, p.key(inv), p.spec, *p.series);
    const Permit permit = detail::take_on_this_thread(a);
    if (!permit) return p.busy(a);  // skipped: the proxy decides what the call returns
    {
      // The permit is in the call's context while the method runs.
      detail::ContextPush in_context(detail::HeldPermit::of(permit).context_link(detail::context_head()));
      inv.proceed();
    }
    // `permit` gives itself back as the call returns (or unwinds); a store
    // failure then is counted and reported, never thrown over the result.
  }
};

}  // namespace

// Registers `semaphore` with Weave::core when this object is linked: every
// target linking the static Weave::quota names weave_link_semaphore (-u:
// REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_semaphore = 0;

namespace {
[[maybe_unused]] const bool semaphore_registered = [] {
  detail::register_builtin_interceptor(
      "semaphore", [] { return std::shared_ptr<Interceptor>(std::make_shared<SemaphoreInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
