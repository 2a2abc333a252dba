#include "core/change_waiter.h"

#include <utility>

namespace WEAVE_NAMESPACE::detail {

class ChangeBell::Waiter final : public ChangeWaiter {
 public:
  Waiter(std::shared_ptr<ChangeBell> bell, std::uint64_t seen) : bell_(std::move(bell)), seen_(seen) {}

  bool wait_until(std::chrono::steady_clock::time_point deadline) override {
    Guard g(bell_->mutex_);
    const bool changed = bell_->mutex_.wait_until(
        bell_->cv_, deadline, [&]() WEAVE_REQUIRES(bell_->mutex_) { return bell_->generation_ != seen_; });
    seen_ = bell_->generation_;
    return changed;
  }

  bool wake_on_change(std::function<void()> wake) override {
    bool armed;
    {
      Guard g(bell_->mutex_);
      armed = bell_->wakes_.arm(this, wake, /*changed=*/bell_->generation_ != seen_);
    }
    if (!armed) wake();  // changed already
    return true;
  }

  ~Waiter() override {
    Guard g(bell_->mutex_);
    bell_->wakes_.drop(this);
  }

 private:
  std::shared_ptr<ChangeBell> bell_;
  std::uint64_t seen_;
};

std::unique_ptr<ChangeWaiter> ChangeBell::waiter() {
  Guard g(mutex_);
  return std::make_unique<Waiter>(shared_from_this(), generation_);
}

void ChangeBell::ring() {
  Guard g(mutex_);
  ++generation_;
  cv_.notify_all();
  wakes_.fire();
}

}  // namespace weave::detail
