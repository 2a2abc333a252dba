// The built-in `timeout` interceptor: the rest of the chain under a deadline
// scope (weave/timeout.h), whose stop token fires at the deadline; past it,
// the caller gets TimeoutExceeded once the body returns or throws.
#include <memory>

#include "core/builtin.h"
#include "resilience/timeout_call.h"
#include "weave/interceptor.h"
#include "weave/timeout.h"

namespace WEAVE_NAMESPACE {
namespace detail {

std::shared_ptr<const ParsedTimeout> ParsedTimeout::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  const std::chrono::milliseconds after = a.duration("after");
  check_timeout(after);
  return std::make_shared<ParsedTimeout>(after);
}

}  // namespace detail

namespace {

class TimeoutInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return detail::ParsedTimeout::parse(spec); }

  void around(Invocation& inv) override {
    // (a late return stays a return: its work is done, a retry will not run
    // it again; a body that stops at its token should throw)
    auto rest = [&inv] { inv.proceed(); };
    detail::run_before_deadline(inv.prepared<detail::ParsedTimeout>()->after, inv.method(), rest);
  }
};

}  // namespace

// Registers `timeout` with Weave::core when this object is linked (-u:
// REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_timeout = 0;

namespace {
[[maybe_unused]] const bool timeout_registered = [] {
  detail::register_builtin_interceptor(
      "timeout", [] { return std::shared_ptr<Interceptor>(std::make_shared<TimeoutInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
