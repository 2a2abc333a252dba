// weave/retry.h: the backoff's random waits, and the policy's range.
#include <algorithm>
#include <random>
#include <string>

#include "weave/duration.h"
#include "weave/error.h"
#include "weave/retry.h"

namespace WEAVE_NAMESPACE {

std::chrono::nanoseconds retry_delay(const RetryPolicy& p, int done) {
  using std::chrono::nanoseconds;
  // (clamped in milliseconds first: a policy nobody checked must not
  // overflow nanoseconds)
  const std::chrono::milliseconds most_ms = std::clamp(p.max_backoff, std::chrono::milliseconds(0), max_duration);
  const nanoseconds most = most_ms, base = std::clamp(p.backoff, std::chrono::milliseconds(0), most_ms);
  // backoff * 2^(done - 1), stopped at the cap before it could overflow.
  nanoseconds cap = base;
  for (int i = 1; i < done && cap < most; ++i) cap *= 2;
  cap = std::min(cap, most);
  if (cap <= nanoseconds::zero()) return nanoseconds::zero();
  thread_local std::mt19937_64 random{std::random_device{}()};
  return nanoseconds(std::uniform_int_distribution<nanoseconds::rep>(0, cap.count())(random));
}

bool retries(const RetryPolicy& p, const std::exception_ptr& e) noexcept {
  if (!e) return false;
  if (p.retry_on) return p.retry_on(e);
  try {
    std::rethrow_exception(e);
  } catch (const Error& err) {
    return err.retryable();
  } catch (...) {
    return false;
  }
}

void check_retry_policy(const RetryPolicy& p) {
  if (p.attempts < 1 || p.attempts > 100)
    throw UsageError("retry: attempts must be 1 to 100, not " + std::to_string(p.attempts));
  if (p.backoff.count() < 0) throw UsageError("retry: backoff must not be negative");
  if (p.max_backoff > max_duration)
    throw UsageError("retry: max_backoff is over weave::max_duration (" + std::to_string(max_duration.count()) +
                     " ms)");
  if (p.max_backoff < p.backoff)
    throw UsageError("retry: max_backoff (" + std::to_string(p.max_backoff.count()) + " ms) is under backoff (" +
                     std::to_string(p.backoff.count()) + " ms)");
}

}  // namespace weave
