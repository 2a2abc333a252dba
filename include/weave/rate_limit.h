// weave/rate_limit.h — at most `permits` calls per `per` for each key, with
// up to `burst` of them at once, across every process that shares the quota
// store (weave/quota.h).
//
//   weave::RateLimiter limits;                                   // the process-wide quota store
//   const weave::RateLimit api{.permits = 100, .per = 1s, .burst = 20};
//   if (!limits.try_acquire("api:" + user, api).admitted) return too_many_requests();
//   limits.acquire("mail:" + tenant, {.permits = 6000, .per = 1min}, 2s);  // waits its turn, up to 2 s
//
// The decision is GCRA (the generic cell rate algorithm): each key keeps one
// number, the time its quota is spent up to (its "theoretical arrival
// time"), and one step reads and moves it. On Redis that step is one script
// call on the server's clock (TIME): no client clock takes part, so skewed
// hosts decide alike. In every window of length w a key admits at most
// permits·w/per + burst requests (each of weight 1; a request of n permits
// counts n). The number expires by itself once the key is idle, so a key
// costs nothing once its quota has refilled.
//
// Times are whole microseconds: the interval between two permits is per /
// permits rounded up to one, so a rate is never exceeded, and above 20,000
// permits a second per key the rounding keeps it up to 2 % under the rate.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weave/abi.h"
#include "weave/duration.h"
#include "weave/quota.h"

namespace WEAVE_NAMESPACE {

namespace detail {
class QuotaRuntime;
}

struct RateLimit {
  std::uint64_t permits = 0;                       // per `per` (at least 1)
  std::chrono::milliseconds per{std::chrono::seconds(1)};
  std::uint64_t burst = 0;  // admitted at once from idle; 0: `permits` (one period's worth)
};

// A rate as written in [[rate_limit(rate=...)]] and `weave limits --rate`:
// "100/s", "6000/min", "10/h", "5/10s" (permits / a duration, whose number
// may be left out for one unit).
struct RateParse {
  RateLimit limit;    // permits and per (burst 0)
  std::string error;  // "" when `limit` holds the rate
  explicit operator bool() const noexcept { return error.empty(); }
};

inline RateParse parse_rate_text(std::string_view text) {
  const std::string t(text);
  const std::string example = " (a rate is permits per unit: 100/s, 6000/min, 10/h or 5/10s)";
  const std::size_t slash = t.find('/');
  if (slash == std::string::npos) return {{}, "rate '" + t + "' names no unit" + example};
  const std::string count = t.substr(0, slash), unit = t.substr(slash + 1);
  if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos)
    return {{}, "rate '" + t + "': '" + count + "' is not a whole number of permits" + example};
  if (count.size() > 18) return {{}, "rate '" + t + "': " + count + " permits is too many (at most 18 digits)"};
  RateLimit limit;
  for (char c : count) limit.permits = limit.permits * 10 + static_cast<std::uint64_t>(c - '0');
  if (limit.permits < 1) return {{}, "rate '" + t + "' admits nothing: permits must be at least 1"};
  // "s" is one second; "10s" ten.
  const DurationParse per = parse_duration_text(!unit.empty() && unit[0] >= '0' && unit[0] <= '9' ? unit : "1" + unit);
  if (!per) return {{}, "rate '" + t + "': " + per.error};
  if (per.value.count() < 1) return {{}, "rate '" + t + "': the period must be at least 1ms"};
  limit.per = per.value;
  return {limit, ""};
}

struct RateDecision {
  bool admitted = false;
  // Admitted: how long the caller waits for its turn (0 unless it asked to
  // wait). Refused: how long until the same request would be admitted
  // without waiting, by the store's clock.
  std::chrono::microseconds wait{0};
  // Permits the key could admit at once right after this decision.
  std::uint64_t remaining = 0;
};

// What the store holds for one limited key (`weave limits`).
struct RateLimitState {
  std::string key;
  // How far ahead of now the key's quota is spent, by the store's clock (its
  // theoretical arrival time − now): after it the key admits `burst` at
  // once again. A key with nothing spent is not stored, so never listed.
  std::chrono::microseconds spent_ahead{0};
};

// The permits a key whose quota is spent `spent_ahead` past now admits at
// once under `limit`, as a decision counts them (`weave limits --rate`).
// Throws UsageError for a limit out of range.
WEAVE_API std::uint64_t permits_left(const RateLimit& limit, std::chrono::microseconds spent_ahead);

// Thread-safe; copies share their store.
class WEAVE_API RateLimiter {
 public:
  // On the process-wide quota store (configure_quota(), else what
  // weave::load_options<QuotaOptions>() loads), taken at each call.
  RateLimiter();
  // On a store of its own.
  explicit RateLimiter(QuotaOptions options);

  // Admits `permits` (1 ≤ permits ≤ the limit's burst) now, or refuses
  // without waiting. Throws UsageError for a limit out of range, IoError
  // (and its kinds) when the store fails.
  RateDecision try_acquire(std::string_view key, const RateLimit& limit, std::uint64_t permits = 1);
  // Admits `permits`, sleeping until the key's turn when that comes within
  // `wait` (the turn is taken at once, in the order the calls reached the
  // store: no polling, no herd); otherwise throws RateLimited (nothing taken).
  void acquire(std::string_view key, const RateLimit& limit, std::chrono::milliseconds wait,
               std::uint64_t permits = 1);
  // As acquire(), returning the decision instead of throwing (and without
  // sleeping: an admitted decision's `wait` is the caller's to sleep).
  RateDecision reserve(std::string_view key, const RateLimit& limit, std::chrono::milliseconds wait,
                       std::uint64_t permits = 1);

  // The stored keys matching the glob `pattern`, sorted by key: for
  // operators (a walk over the whole store: SCAN on Redis).
  std::vector<RateLimitState> list(std::string_view pattern = "*");

 private:
  std::shared_ptr<detail::QuotaRuntime> own_;  // null: the process-wide one
};

}  // namespace weave
