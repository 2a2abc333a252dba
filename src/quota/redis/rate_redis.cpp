// Rate limits on Redis (redis://, redis+cluster://, redis+sentinel://): one
// script call per decision (scripts/rate.lua), on one key per limited key,
// "{<prefix>rate:<key>}" (one slot).
#include <string>

#include "quota/quota_runtime.h"
#include "quota/rate_store.h"
#include "quota/scripts.h"
#include "store/open.h"
#include "store/reply.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

class RedisRates final : public RateStore {
 public:
  RedisRates(std::shared_ptr<store::Executor> exec, std::string prefix)
      : exec_(std::move(exec)), prefix_(std::move(prefix)) {}

  RateDecision step(std::string_view key, const RateStep& s) override {
    std::string k;
    k.reserve(prefix_.size() + key.size() + 7);
    k.append("{").append(prefix_).append("rate:").append(key).append("}");
    const std::string interval = std::to_string(s.interval_us), burst = std::to_string(s.burst),
                      permits = std::to_string(s.permits), max_wait = std::to_string(s.max_wait_us);
    const store::Reply reply =
        store::run_one(*exec_, {quota_redis::scripts::rate, {k}, {interval, burst, permits, max_wait}}, "rate limit");
    const store::ReplyView r(reply, "rate limit");
    RateDecision d;
    d.admitted = r[0].integer() == 1;
    d.wait = std::chrono::microseconds(r[1].integer());
    d.remaining = static_cast<std::uint64_t>(r[2].integer());
    return d;
  }

 private:
  std::shared_ptr<store::Executor> exec_;
  std::string prefix_;
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Registers the Redis schemes for rate limits when Weave::quota_redis is
// linked: its static targets name weave_link_quota_redis (-u: REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_quota_redis = 0;
namespace {
[[maybe_unused]] const bool quota_redis_registered = [] {
  for (const char* scheme : store::executor_schemes)
    detail::register_rate_store(scheme, [](const QuotaOptions& o) -> std::shared_ptr<detail::RateStore> {
      return std::make_shared<detail::RedisRates>(store::open_executor(o.url, store::connection_settings(o)),
                                                  o.key_prefix);
    });
  return true;
}();
}  // namespace
}  // namespace weave
