// The built-in `circuit_breaker` interceptor: reads the annotation once (the
// process-wide breaker of its name), asks it for a pass, and tells it how
// the rest of the call ended: an exception is a failure (record_on and
// ignore_on may say otherwise).
#include <string>

#include "core/builtin.h"
#include "resilience/circuit_breaker_call.h"
#include "weave/interceptor.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::circuit_breaker;
static_assert(vocab::on_open_values[1] == "skip");

std::shared_ptr<const ParsedCircuitBreaker> ParsedCircuitBreaker::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  CircuitBreakerPolicy p;
  p.failure_rate = static_cast<int>(a.has("failure_rate") ? a.integer("failure_rate") : vocab::failure_rate);
  if (a.has("slow_call")) {
    p.slow_call = a.duration("slow_call");
    p.slow_call_rate = static_cast<int>(a.has("slow_call_rate") ? a.integer("slow_call_rate") : vocab::slow_call_rate);
  }
  if (a.has("window_calls")) p.window_calls = static_cast<std::uint32_t>(a.integer("window_calls"));
  else p.window = a.has("window") ? a.duration("window") : vocab::window;
  p.min_calls = static_cast<std::uint32_t>(a.has("min_calls") ? a.integer("min_calls") : vocab::min_calls);
  p.open_for = a.has("open_for") ? a.duration("open_for") : vocab::open_for;
  p.half_open_calls =
      static_cast<std::uint32_t>(a.has("half_open_calls") ? a.integer("half_open_calls") : vocab::half_open_calls);
  p.shared = a.has("shared") ? a.boolean("shared") : vocab::shared;
  // (weave::circuit_breaker(): the member `breaker` hides nothing here, but spelled alike)
  auto parsed = std::make_shared<ParsedCircuitBreaker>(::weave::circuit_breaker(a.text("name"), p));
  parsed->skip_when_open = (a.has("on_open") ? a.choice("on_open", vocab::on_open_values) : vocab::on_open) == 1;
  if (a.has("record_on")) parsed->record_on = a.exception_types("record_on");
  if (a.has("ignore_on")) parsed->ignore_on = a.exception_types("ignore_on");
  return parsed;
}

}  // namespace detail

namespace {

class CircuitBreakerInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override {
    return detail::ParsedCircuitBreaker::parse(spec);
  }

  void around(Invocation& inv) override {
    const detail::ParsedCircuitBreaker& p = *inv.prepared<detail::ParsedCircuitBreaker>();
    CircuitPass pass = p.breaker.try_pass_borrowed();  // (the parsed annotation, and its breaker, outlive the call)
    if (!pass) return p.refused();  // skipped: the proxy decides what the call returns
    try {
      inv.proceed();
    } catch (...) {
      p.end_with(pass, std::current_exception());
      throw;
    }
    pass.succeeded();
  }
};

}  // namespace

// Registers `circuit_breaker` with Weave::core when this object is linked
// (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_circuit_breaker = 0;

namespace {
[[maybe_unused]] const bool circuit_breaker_registered = [] {
  detail::register_builtin_interceptor("circuit_breaker", [] {
    return std::shared_ptr<Interceptor>(std::make_shared<CircuitBreakerInterceptor>());
  });
  return true;
}();
}  // namespace

}  // namespace weave
