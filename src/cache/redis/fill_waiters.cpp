// This process's callers waiting for a fill lease another caller holds
// (sync=true): each waits on its entry key and is woken by any message about
// it (a fill, put or evict of the key, an eviction of its name, a gap of the
// feed), then reads again. The waits are here, apart from the messages that
// cause them, so that the one rule they keep is plain: a waiter registers
// before its claim, so a wake published after the claim is never lost.
#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "cache/redis/internal.h"

namespace WEAVE_NAMESPACE::cache_redis {

FillWaiters::Waiting::Waiting(FillWaiters& w, std::string entry) : w_(w), entry_(std::move(entry)) {
  detail::Guard g(w_.mutex_);
  Slot& slot = w_.waits_[entry_];
  ++slot.waiters;
  wakes_ = slot.wakes;
  all_ = w_.wake_all_;
  w_.waiting_.fetch_add(1);
}

FillWaiters::Waiting::~Waiting() {
  detail::Guard g(w_.mutex_);
  w_.waiting_.fetch_sub(1);
  auto it = w_.waits_.find(entry_);
  it->second.wakes_without_thread.drop(this);
  if (--it->second.waiters == 0) w_.waits_.erase(it);
}

bool FillWaiters::Waiting::woken_locked() { return w_.waits_[entry_].wakes != wakes_ || w_.wake_all_ != all_; }

bool FillWaiters::Waiting::wait_until(std::chrono::steady_clock::time_point until) {
  detail::Guard g(w_.mutex_);
  return w_.mutex_.wait_until(w_.cv_, until, [&]() WEAVE_REQUIRES(w_.mutex_) { return woken_locked(); });
}

bool FillWaiters::Waiting::wake_on_change(std::function<void()> wake) {
  bool armed;
  {
    detail::Guard g(w_.mutex_);
    armed = w_.waits_[entry_].wakes_without_thread.arm(this, wake, /*changed=*/woken_locked());
  }
  if (!armed) wake();
  return true;
}

void FillWaiters::woken(const std::string& entry) {
  if (waiting_.load() == 0) return;
  {
    detail::Guard g(mutex_);
    auto it = waits_.find(entry);
    if (it == waits_.end()) return;
    ++it->second.wakes;
    it->second.wakes_without_thread.fire();
  }
  cv_.notify_all();
}

void FillWaiters::woken_all() {
  if (waiting_.load() == 0) return;
  {
    detail::Guard g(mutex_);
    ++wake_all_;
    for (auto& [entry, slot] : waits_) slot.wakes_without_thread.fire();
  }
  cv_.notify_all();
}

}  // namespace weave::cache_redis
