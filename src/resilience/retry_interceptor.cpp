// The built-in `retry` interceptor: reads the annotation once (a
// RetryPolicy), then runs the rest of the chain under weave::retry() (again
// after an error the policy retries, the backoff's wait slept on this
// thread); spent runs go to the fallback when there is one.
#include <memory>

#include "core/builtin.h"
#include "resilience/retry_call.h"
#include "weave/interceptor.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::retry;

std::shared_ptr<const ParsedRetry> ParsedRetry::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  auto p = std::make_shared<ParsedRetry>();
  p->policy.attempts = static_cast<int>(a.has("attempts") ? a.integer("attempts") : vocab::attempts);
  p->policy.backoff = a.has("backoff") ? a.duration("backoff") : vocab::backoff;
  p->policy.max_backoff = a.has("max_backoff") ? a.duration("max_backoff") : vocab::max_backoff;
  if (a.has("retry_on")) p->policy.retry_on = a.exception_types("retry_on");
  p->falls_back = a.has("fallback");
  check_retry_policy(p->policy);
  return p;
}

}  // namespace detail

namespace {

class RetryInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return detail::ParsedRetry::parse(spec); }

  void around(Invocation& inv) override {
    const detail::ParsedRetry& p = *inv.prepared<detail::ParsedRetry>();
    auto run = [&inv] { inv.proceed(); };
    try {
      // An error after the method itself returned (a result the store could
      // not keep) is not the method's to run again: it passes on.
      detail::retry_while(p.policy, run, [&inv] { return !inv.proceeded(); });
    } catch (...) {
      if (!p.to_fallback(std::current_exception(), inv.proceeded())) throw;
      // The runs are spent: returning without the method skips to the fallback.
    }
  }
};

}  // namespace

// Registers `retry` with Weave::core when this object is linked (-u:
// REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_retry = 0;

namespace {
[[maybe_unused]] const bool retry_registered = [] {
  detail::register_builtin_interceptor(
      "retry", [] { return std::shared_ptr<Interceptor>(std::make_shared<RetryInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
