// The built-in `rate_limit` interceptor: reads the annotation once, asks the
// process-wide quota store for each call's admission, then runs the method
// (after its turn), skips it, or throws RateLimited.
#include <string>
#include <thread>

#include "core/builtin.h"
#include "core/feature_runtime.h"
#include "quota/quota_runtime.h"
#include "quota/rate_limit_call.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave_vocabulary.h"

namespace WEAVE_NAMESPACE {
namespace detail {

namespace vocab = vocabulary::rate_limit;
// The C++ enum follows the vocabulary's order.
static_assert(vocab::on_limit_values[static_cast<int>(OnLimit::fail)] == "throw" &&
              vocab::on_limit_values[static_cast<int>(OnLimit::wait)] == "wait" &&
              vocab::on_limit_values[static_cast<int>(OnLimit::skip)] == "skip");
static_assert(vocab::on_store_error_values[1] == "allow");

std::shared_ptr<const ParsedRateLimit> ParsedRateLimit::parse(const AnnotationSpec& spec) {
  const Annotation a(spec, {});
  auto p = std::make_shared<ParsedRateLimit>();
  const ArgRate rate = a.rate("rate");
  if (rate.permits < 1) throw UsageError("rate_limit rate admits nothing: its permits must be at least 1");
  p->limit.permits = static_cast<std::uint64_t>(rate.permits);
  p->limit.per = rate.per;
  if (a.has("burst")) {
    const std::int64_t burst = a.integer("burst");
    if (burst < 1) throw UsageError("rate_limit burst must be at least 1, not " + std::to_string(burst));
    p->limit.burst = static_cast<std::uint64_t>(burst);
  }
  p->on_limit = static_cast<OnLimit>(a.has("on_limit") ? a.choice("on_limit", vocab::on_limit_values) : vocab::on_limit);
  if (p->on_limit == OnLimit::wait) p->wait = a.duration("wait");  // the vocabulary requires it there
  p->allow_on_store_error =
      (a.has("on_store_error") ? a.choice("on_store_error", vocab::on_store_error_values) : vocab::on_store_error) == 1;
  p->key = CallKey::of(a);
  p->series = &rate_series(p->key.label);
  // The limit's range, before any call (the store checks it per call too).
  rate_step(p->key.label, p->limit, 1, p->wait);
  return p;
}

RateAdmission admit(const ParsedRateLimit& p, std::string_view key) {
  const QuotaRuntimeRef rt;
  RateDecision d;
  try {
    d = decide(*rt, key, p.limit, 1, p.on_limit == OnLimit::wait ? p.wait : std::chrono::milliseconds(0), *p.series);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    // IoError and its kinds, ReplyError: the store failed (counted by decide()).
    if (!p.allow_on_store_error) throw;
    report_event(rt->options().on_event, EventKind::quota_error, "quota", key, e,
                 "rate limit '" + std::string(key) + "'");
    return {};
  }
  if (d.admitted) return {false, d.wait};
  if (p.on_limit == OnLimit::skip) return {true, {}};
  throw RateLimited(std::string(key), d.wait);
}

}  // namespace detail

namespace {

class RateLimitInterceptor final : public Interceptor {
 public:
  std::shared_ptr<const void> prepare(const AnnotationSpec& spec) override { return detail::ParsedRateLimit::parse(spec); }

  void around(Invocation& inv) override {
    const detail::ParsedRateLimit& p = *inv.prepared<detail::ParsedRateLimit>();
    const detail::RateAdmission a = detail::admit(p, p.key(inv));
    if (a.skip) return;  // the proxy decides what the call returns
    if (a.wait.count() > 0) std::this_thread::sleep_for(a.wait);  // the turn the store gave this call
    inv.proceed();
  }
};

}  // namespace

// Registers `rate_limit` with Weave::core when this object is linked: every
// target linking the static Weave::quota names weave_link_rate_limit
// (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_rate_limit = 0;

namespace {
[[maybe_unused]] const bool rate_limit_registered = [] {
  detail::register_builtin_interceptor(
      "rate_limit", [] { return std::shared_ptr<Interceptor>(std::make_shared<RateLimitInterceptor>()); });
  return true;
}();
}  // namespace

}  // namespace weave
