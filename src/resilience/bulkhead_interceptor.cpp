// The built-in `bulkhead` interceptor: reads the annotation once (the
// process-wide bulkhead of its name), takes a slot for the call (waiting on
// this thread, in line, up to `wait`), and gives it back when the method
// returns or throws.
#include <string>

#include "core/builtin.h"
#include "resilience/bulkhead_call.h"
#include "weave/bulkhead.h"
#include "weave/interceptor.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::bulkhead;
static_assert(vocab::on_full_values[1] == "skip");

std::shared_ptr<const ParsedBulkhead> ParsedBulkhead::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  const std::int64_t max = a.integer("max");
  if (max < 1 || max > kMaxBulkheadSlots)
    throw UsageError("bulkhead max must be 1 to " + std::to_string(kMaxBulkheadSlots) + ", not " +
                     std::to_string(max));
  // (weave::bulkhead(): the member `bulkhead` hides it here)
  auto p = std::make_shared<ParsedBulkhead>(::weave::bulkhead(a.text("name"), static_cast<std::uint32_t>(max)));
  p->wait = a.has("wait") ? a.duration("wait") : vocab::wait;
  p->skip_when_full = (a.has("on_full") ? a.choice("on_full", vocab::on_full_values) : vocab::on_full) == 1;
  return p;
}

}  // namespace detail

namespace {

class BulkheadInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return detail::ParsedBulkhead::parse(spec); }

  void around(Invocation& inv) override {
    const detail::ParsedBulkhead& p = *inv.prepared<detail::ParsedBulkhead>();
    // (borrowed: the parsed annotation, and its bulkhead, outlive the call)
    const BulkheadSlot slot = p.bulkhead.try_enter_borrowed(p.wait);  // given back as the call returns or unwinds
    if (!slot) return p.full();  // skipped: the proxy decides what the call returns
    inv.proceed();
  }
};

}  // namespace

// Registers `bulkhead` with Weave::core when this object is linked: every
// target linking the static Weave::resilience names weave_link_bulkhead
// (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_bulkhead = 0;

namespace {
[[maybe_unused]] const bool bulkhead_registered = [] {
  detail::register_builtin_interceptor(
      "bulkhead", [] { return std::shared_ptr<Interceptor>(std::make_shared<BulkheadInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
