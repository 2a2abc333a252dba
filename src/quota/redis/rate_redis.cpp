// Rate limits on Redis (redis://, redis+cluster://, redis+sentinel://): one
// script call per decision (scripts/rate.lua), on one key per limited key,
// "{<prefix>rate:<key>}" (one slot).
#include <algorithm>
#include <string>
#include <vector>

#include "quota/quota_runtime.h"
#include "quota/rate_store.h"
#include "quota/redis/redis_stores.h"
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
    const std::string k = redis_key(key);
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

  std::vector<RateLimitState> list(std::string_view pattern) override {
    const std::vector<std::string> keys = stored_quota_keys(*exec_, prefix_, "rate", pattern, "list rate limits");
    std::vector<RateLimitState> out;
    constexpr std::size_t kChunk = 500;  // inspections per pipelined round trip
    for (std::size_t from = 0; from < keys.size(); from += kChunk) {
      std::vector<std::string> stored;  // (a ScriptCall views its keys)
      for (std::size_t i = from; i < std::min(keys.size(), from + kChunk); ++i) stored.push_back(redis_key(keys[i]));
      std::vector<store::ScriptCall> calls;
      for (const std::string& k : stored) calls.push_back({quota_redis::scripts::inspect, {k}, {}});
      const std::vector<store::Reply> replies = exec_->run(calls, "list rate limits");
      for (std::size_t i = 0; i < replies.size(); ++i) {
        const long long ahead = store::ReplyView(replies[i], "list rate limits").integer();
        if (ahead > 0) out.push_back({keys[from + i], std::chrono::microseconds(ahead)});
      }
    }
    return out;
  }

 private:
  // "{<prefix>rate:<key>}": the key's one slot.
  std::string redis_key(std::string_view key) const {
    std::string k;
    k.reserve(prefix_.size() + key.size() + 7);
    k.append("{").append(prefix_).append("rate:").append(key).append("}");
    return k;
  }

  std::shared_ptr<store::Executor> exec_;
  std::string prefix_;
};

}  // namespace

std::shared_ptr<RateStore> make_redis_rates(const QuotaOptions& o) {
  return std::make_shared<RedisRates>(store::open_executor(o.url, store::connection_settings(o)), o.key_prefix);
}

}  // namespace weave::detail
