// A coroutine's wait for one event that another thread announces: a lock's
// release (through LockWaiter::wake_on_release), a local leader's turn, a
// single flight's end. notify() is thread-safe and quick; wait_until()
// suspends (no thread held) until notified, the deadline, or the awaiting
// coroutine's cancellation (terminal or partial: operation_aborted).
//
//   auto w = std::make_shared<Wakeup>();
//   waiter.wake_on_release([w] { w->notify(); });
//   bool released = co_await w->wait_until(deadline);
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

class WEAVE_API Wakeup : public std::enable_shared_from_this<Wakeup> {
 public:
  using Clock = std::chrono::steady_clock;
  // Wakes the waiting coroutine, or the next wait if none waits now (a
  // notification is kept until a wait takes it).
  void notify();
  // True when notified (since construction or the last wait that returned
  // true), false at `deadline` (Clock::time_point::max(): none). Throws
  // boost::system::system_error(operation_aborted) when the awaiting
  // coroutine is cancelled. One wait at a time.
  boost::asio::awaitable<bool> wait_until(Clock::time_point deadline);

  struct Wait;  // one pending wait (wakeup.cpp)

 private:
  std::mutex mutex_;
  bool notified_ = false;
  std::weak_ptr<Wait> waiting_;  // owned by its timer's pending wait
};

}  // namespace weave::detail
