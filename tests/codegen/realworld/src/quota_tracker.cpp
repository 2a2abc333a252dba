// The real (un-woven) implementation of myabsl/quota/quota_tracker.h.
#include "myabsl/quota/quota_tracker.h"

#include <string>
#include <utility>

#include "realworld/probe.h"

namespace myabsl {
MYABSL_NAMESPACE_BEGIN

QuotaTracker::QuotaTracker(std::string region, std::string tenant, std::int64_t limit)
    : region_(std::move(region)), tenant_(std::move(tenant)), limit_(limit) {}

QuotaTracker::~QuotaTracker() = default;

bool QuotaTracker::TryCharge(std::int64_t units) {
  realworld::Probe::note("QuotaTracker::TryCharge " + std::to_string(units));
  MutexLock lock(&mu_);
  if (used_ + units > limit_) return false;
  const bool was_below = used_ * 5 < limit_ * 4;
  used_ += units;
  if (was_below && used_ * 5 >= limit_ * 4) OnNearLimit(used_);
  return true;
}

std::int64_t QuotaTracker::Remaining() const {
  MutexLock lock(&mu_);
  return limit_ - used_;
}

void QuotaTracker::ResetWindow() {
  realworld::Probe::note("QuotaTracker::ResetWindow");
  MutexLock lock(&mu_);
  used_ = 0;
}

void QuotaTracker::ResetWindowLater() { ResetWindow(); }

void QuotaTracker::RaiseLimit(const std::string& bucket, std::int64_t by) {
  realworld::Probe::note("QuotaTracker::RaiseLimit " + bucket);
  MutexLock lock(&mu_);
  limit_ += by;
}

void QuotaTracker::OnNearLimit(std::int64_t used) {
  realworld::Probe::note("QuotaTracker::OnNearLimit " + std::to_string(used));
}

MYABSL_NAMESPACE_END
}  // namespace myabsl
