// Where rate limits keep each key's state, and the decision on it: GCRA in
// whole microseconds. mem:// runs gcra_step() below in this process
// (rate_mem.cpp); the Redis URLs run the same step in one script on the
// server's clock (scripts/rate.lua), which must stay its exact mirror.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "weave/abi.h"
#include "weave/rate_limit.h"

namespace WEAVE_NAMESPACE::detail {

// One decision's request: the key's limit as an interval between permits
// and a burst, and the permits asked for.
struct RateStep {
  std::uint64_t interval_us = 1;  // per / permits, rounded up
  std::uint64_t burst = 1;        // permits admitted at once from idle
  std::uint64_t permits = 1;      // taken by this request (<= burst)
  std::uint64_t max_wait_us = 0;  // admitted if its turn comes within this
};

// The step on a key whose quota is spent up to `tat` (its theoretical
// arrival time; `now` when it has none or an older one), at `now`:
//   new_tat = max(tat, now) + permits·interval; the request's turn is
//   new_tat − burst·interval; admitted when the turn is at most max_wait
//   after now, and then the key's tat becomes new_tat.
// So the admitted requests' turns never run ahead of the rate: in any
// window of length w, at most w/interval + burst permits have turns in it.
// Permits a key admits at once when its quota is spent `ahead` us past now
// (capacity = burst x interval): what a decision reports as `remaining`.
inline std::uint64_t free_permits(std::int64_t capacity, std::int64_t ahead, std::int64_t interval) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, (capacity - ahead) / interval));
}

inline RateDecision gcra_step(std::int64_t& tat, std::int64_t now, const RateStep& s) {
  const std::int64_t interval = static_cast<std::int64_t>(s.interval_us);
  const std::int64_t capacity = static_cast<std::int64_t>(s.burst) * interval;
  const std::int64_t from = std::max(tat, now);
  const std::int64_t new_tat = from + static_cast<std::int64_t>(s.permits) * interval;
  const std::int64_t turn_in = new_tat - capacity - now;
  RateDecision d;
  if (turn_in > static_cast<std::int64_t>(s.max_wait_us)) {
    d.wait = std::chrono::microseconds(turn_in);
    d.remaining = free_permits(capacity, from - now, interval);
    return d;
  }
  tat = new_tat;
  d.admitted = true;
  d.wait = std::chrono::microseconds(std::max<std::int64_t>(0, turn_in));
  d.remaining = free_permits(capacity, new_tat - now, interval);
  return d;
}

class RateStore {
 public:
  virtual ~RateStore() = default;
  // One decision for `key` (rendered, without the prefix). Throws IoError
  // (and its kinds) or ReplyError when the store fails.
  virtual RateDecision step(std::string_view key, const RateStep& s) = 0;
  // The stored keys matching the glob `pattern` whose quota is spent ahead
  // of now, in any order.
  virtual std::vector<RateLimitState> list(std::string_view pattern) = 0;
  // mem://: a step is a call in this process (an asynchronous caller makes it inline).
  virtual bool in_process() const noexcept { return false; }
};

// mem://[table]: the table shared by every quota store of the same URL in
// this process (its clock: steady_clock).
std::shared_ptr<RateStore> make_mem_rates(std::string_view table);

}  // namespace weave::detail
