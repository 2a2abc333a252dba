// weave::RateLimiter: a limit checked and turned into one GCRA step
// (quota/rate_store.h), sent to the runtime's store, counted.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/feature_config.h"
#include "quota/quota_runtime.h"
#include "weave/error.h"
#include "weave/rate_limit.h"

namespace WEAVE_NAMESPACE {
namespace {

using std::chrono::microseconds;

// Turns stay exact in the Lua script's numbers (doubles): now (~2^51 µs)
// plus a span of at most this stays below 2^53.
constexpr std::uint64_t kMaxSpanUs = std::uint64_t{1} << 50;

}  // namespace

detail::RateStep detail::rate_step(std::string_view name, const RateLimit& limit, std::uint64_t permits,
                                   std::chrono::milliseconds wait) {
  const auto bad = [name](const std::string& why) {
    return UsageError("rate limit '" + std::string(name) + "': " + why);
  };
  if (limit.permits == 0) throw bad("permits must be at least 1");
  if (limit.per.count() <= 0) throw bad("per must be at least 1ms");
  if (static_cast<std::uint64_t>(limit.per.count()) > kMaxSpanUs / 1000)
    throw bad("per spans over 2^50 microseconds (35 years)");
  const std::uint64_t per_us = static_cast<std::uint64_t>(limit.per.count()) * 1000;
  RateStep s;
  // Rounded up, and at least 1 (more permits than microseconds in `per`):
  // no overflow for any `permits`.
  s.interval_us = per_us / limit.permits + (per_us % limit.permits != 0);
  s.burst = limit.burst != 0 ? limit.burst : limit.permits;
  if (s.burst > kMaxSpanUs / s.interval_us)
    throw bad("burst x the interval between permits spans over 2^50 microseconds (35 years)");
  if (permits == 0 || permits > s.burst)
    throw bad("a request takes 1 to burst (" + std::to_string(s.burst) + ") permits, not " + std::to_string(permits));
  if (wait.count() < 0) throw bad("wait must not be negative");
  s.permits = permits;
  s.max_wait_us = std::min<std::uint64_t>(static_cast<std::uint64_t>(wait.count()), kMaxSpanUs / 1000) * 1000;
  return s;
}

RateDecision detail::decide(QuotaRuntime& rt, std::string_view key, const RateLimit& limit, std::uint64_t permits,
                            std::chrono::milliseconds wait, RateSeries& series) {
  if (key.empty()) throw UsageError("rate limit: the key is empty");
  if (key.size() > rt.options().max_key_bytes)
    throw UsageError("rate limit '" + std::string(key) + "': the key is " + std::to_string(key.size()) +
                     " bytes, over QuotaOptions::max_key_bytes (" + std::to_string(rt.options().max_key_bytes) + ")");
  const RateStep s = rate_step(key, limit, permits, wait);
  const auto count = [&](std::atomic<std::uint64_t> QuotaCounterStripe::*field) {
    rt.count(field);
    series.counts.add(field);
  };
  RateDecision d;
  try {
    d = rt.rates().step(key, s);
  } catch (Error& e) {
    count(&QuotaCounterStripe::errors);
    name_key(e, key, "rate limit");
    throw;
  }
  if (!d.admitted) {
    count(&QuotaCounterStripe::limited);
    return d;
  }
  count(&QuotaCounterStripe::admitted);
  if (d.wait.count() > 0) count(&QuotaCounterStripe::waited);
  series.wait.observe(d.wait);
  return d;
}

RateLimiter::RateLimiter() = default;
RateLimiter::RateLimiter(QuotaOptions options) : own_(std::make_shared<detail::QuotaRuntime>(std::move(options))) {}

RateDecision RateLimiter::try_acquire(std::string_view key, const RateLimit& limit, std::uint64_t permits) {
  return reserve(key, limit, std::chrono::milliseconds(0), permits);
}

RateDecision RateLimiter::reserve(std::string_view key, const RateLimit& limit, std::chrono::milliseconds wait,
                                  std::uint64_t permits) {
  // RateLimiter's own calls count under rate_limit="" (their keys are not a bounded label).
  static detail::RateSeries& direct = detail::rate_series("");
  return detail::with_runtime(own_, [&](detail::QuotaRuntime& rt) { return detail::decide(rt, key, limit, permits, wait, direct); });
}

std::uint64_t permits_left(const RateLimit& limit, std::chrono::microseconds spent_ahead) {
  const detail::RateStep s = detail::rate_step("permits_left", limit, 1, std::chrono::milliseconds(0));
  const auto interval = static_cast<std::int64_t>(s.interval_us);
  return detail::free_permits(static_cast<std::int64_t>(s.burst) * interval,
                              std::max<std::int64_t>(0, spent_ahead.count()), interval);
}

std::vector<RateLimitState> RateLimiter::list(std::string_view pattern) {
  std::vector<RateLimitState> out =
      detail::with_runtime(own_, [&](detail::QuotaRuntime& rt) { return rt.rates().list(pattern); });
  std::sort(out.begin(), out.end(), [](const RateLimitState& a, const RateLimitState& b) { return a.key < b.key; });
  return out;
}

void RateLimiter::acquire(std::string_view key, const RateLimit& limit, std::chrono::milliseconds wait,
                          std::uint64_t permits) {
  const RateDecision d = reserve(key, limit, wait, permits);
  if (!d.admitted) throw RateLimited(std::string(key), d.wait);
  if (d.wait.count() > 0) std::this_thread::sleep_for(d.wait);  // the turn the store gave it
}

// Registers the quota options with the loader when this object is linked:
// every target linking the static Weave::quota names weave_link_quota (-u:
// REGISTERS in src/CMakeLists.txt).
extern "C" const char weave_link_quota = 0;

namespace {
[[maybe_unused]] const bool quota_registered = [] {
  using detail::option;
  using O = QuotaOptions;
  detail::register_feature_config(
      detail::describe(detail::with_store_options<O>({option("max_key_bytes", &O::max_key_bytes),
                                                      option("permit_lease", &O::permit_lease),
                                                      option("line_place", &O::line_place)}),
                       &configure_quota));
  return true;
}();
}  // namespace

}  // namespace weave
