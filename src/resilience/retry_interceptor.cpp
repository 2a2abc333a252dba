// The built-in `retry` interceptor: reads the annotation once (a
// RetryPolicy), then runs the rest of the chain under weave::retry() (again
// after a retryable weave::Error, the backoff's wait slept on this thread).
#include <memory>

#include "core/builtin.h"
#include "resilience/retry_call.h"
#include "weave/interceptor.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::retry;

std::shared_ptr<const RetryPolicy> parse_retry(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  auto p = std::make_shared<RetryPolicy>();
  p->attempts = static_cast<int>(a.has("attempts") ? a.integer("attempts") : vocab::attempts);
  p->backoff = a.has("backoff") ? a.duration("backoff") : vocab::backoff;
  p->max_backoff = a.has("max_backoff") ? a.duration("max_backoff") : vocab::max_backoff;
  check_retry_policy(*p);
  return p;
}

}  // namespace detail

namespace {

class RetryInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return detail::parse_retry(spec); }

  void around(Invocation& inv) override {
    auto run = [&inv] { inv.proceed(); };
    // An error after the method itself returned (a result the store could
    // not keep) is not the method's to run again: it passes on.
    detail::retry_while(*inv.prepared<RetryPolicy>(), run, [&inv] { return !inv.proceeded(); });
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
