#include "async/context_executor.h"

#include <mutex>
#include <thread>

namespace WEAVE_NAMESPACE::detail {

namespace {
using boost::asio::cancellation_type;
}  // namespace

void CallCell::cancel(cancellation_type type, bool loss) noexcept {
  std::unique_lock g(lock);
  if (loss && loss_armed_ == 0) return;  // the body it was meant for ended
  if (running_ > 0) {
    (loss ? pending_loss_ : pending_) |= type;  // emitted as the running handlers end
    return;
  }
  ++running_;
  emitter_ = std::this_thread::get_id();
  boost::asio::cancellation_signal* const target = target_;
  g.unlock();
  target->emit(type);
  leave();
}

void CallCell::disconnect() noexcept {
  std::lock_guard g(lock);
  own_.slot().clear();
}

void CallCell::arm_loss() noexcept {
  std::lock_guard g(lock);
  ++loss_armed_;
}

void CallCell::forget_loss() noexcept {
  std::lock_guard g(lock);
  if (loss_armed_ > 0) --loss_armed_;
  pending_loss_ = cancellation_type::none;
}

boost::asio::cancellation_signal* CallCell::retarget(boost::asio::cancellation_signal* signal) noexcept {
  std::lock_guard g(lock);
  return std::exchange(target_, signal);
}

std::shared_ptr<const ContextLink> CallCell::enter() noexcept {
  std::unique_lock g(lock);
  const std::thread::id me = std::this_thread::get_id();
  while (emitter_ != std::thread::id() && emitter_ != me) {
    g.unlock();
    std::this_thread::yield();
    g.lock();
  }
  ++running_;
  return head;
}

void CallCell::leave() noexcept {
  std::unique_lock g(lock);
  for (;;) {
    if (--running_ > 0) return;
    const cancellation_type type = pending_ | pending_loss_;
    if (type == cancellation_type::none) {
      emitter_ = std::thread::id();
      return;
    }
    pending_ = pending_loss_ = cancellation_type::none;
    ++running_;
    emitter_ = std::this_thread::get_id();
    boost::asio::cancellation_signal* const target = target_;
    g.unlock();
    target->emit(type);
    g.lock();
  }
}

}  // namespace weave::detail
