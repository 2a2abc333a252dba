// myabsl/quota/quota_tracker.h — per-tenant usage quotas of one region, in
// the style of an Abseil component: versioned inline namespace, thread-safety
// annotations on every method that touches guarded state.
//
// A tracker runs in every replica of a service; the Weave lock on
// "region:<region>:<tenant>" makes check-then-charge atomic across replicas.
// The keys read the tracker itself (`this.`), not a parameter.
#ifndef MYABSL_QUOTA_QUOTA_TRACKER_H_
#define MYABSL_QUOTA_QUOTA_TRACKER_H_

#include <cstdint>
#include <string>

#include "myabsl/base/config.h"
#include "myabsl/base/thread_annotations.h"
#include "myabsl/synchronization/mutex.h"

namespace myabsl {
MYABSL_NAMESPACE_BEGIN

class QuotaTracker {
 public:
  QuotaTracker(std::string region, std::string tenant, std::int64_t limit);
  QuotaTracker(const QuotaTracker&) = delete;
  QuotaTracker& operator=(const QuotaTracker&) = delete;
  virtual ~QuotaTracker();

  const std::string& tenant() const { return tenant_; }

  // Charges `units` against the quota; returns false, charging nothing, when
  // that would exceed the limit.
  [[lock(key="region:<this.region_>:<this.tenant()>", wait=500ms)]]
  virtual bool TryCharge(std::int64_t units) LOCKS_EXCLUDED(mu_);

  // Units left in the current window. Not annotated.
  std::int64_t Remaining() const LOCKS_EXCLUDED(mu_);

  // Starts a new window.
  [[audit(event="quota.reset", subject="<this.tenant()>@<this.region_>")]]
  [[lock(key="region:<this.region_>:<this.tenant()>", wait=500ms)]]
  virtual void ResetWindow() LOCKS_EXCLUDED(mu_);

  // Starts a new window in an hour, run by whichever replica's DelayWorker
  // takes the stored call. (Its proxy spells out the special members, which
  // this non-copyable class without a default constructor deletes: clang
  // must not warn about that in generated code.)
  [[delay(queue="quota-reset", after=1h)]]
  virtual void ResetWindowLater();

  // Raises the limit of the tracker; the bucket names who asked.
  [[lock(key="limit:<this.region_>:<this.tenant()>:<bucket>")]]
  void RaiseLimit(const std::string& bucket, std::int64_t by) LOCKS_EXCLUDED(mu_);

 protected:
  // Called by TryCharge, with mu_ held, when usage crosses 80% of the limit.
  [[audit(event="quota.near_limit", subject="<this.tenant()>")]]
  virtual void OnNearLimit(std::int64_t used) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string region_;

 private:
  mutable Mutex mu_;
  const std::string tenant_;
  std::int64_t limit_ GUARDED_BY(mu_);
  std::int64_t used_ GUARDED_BY(mu_) = 0;
};

MYABSL_NAMESPACE_END
}  // namespace myabsl

#endif  // MYABSL_QUOTA_QUOTA_TRACKER_H_
