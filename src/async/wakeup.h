// A coroutine's wait for one event that another thread announces: a lock's
// release (through LockWaiter::wake_on_change), a local leader's turn, a
// single flight's end. notify() is thread-safe and quick; wait_until()
// suspends (no thread held) until notified, the deadline, or the awaiting
// coroutine's cancellation (terminal or partial: operation_aborted).
//
//   auto w = std::make_shared<Wakeup>();
//   waiter.wake_on_change([w] { w->notify(); });
//   bool released = co_await w->wait_until(deadline);
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "async/blocking_pool.h"
#include "core/process.h"
#include "weave/abi.h"
#include "weave/asio.h"

namespace WEAVE_NAMESPACE::detail {

class Wakeup : public std::enable_shared_from_this<Wakeup> {
 public:
  using Clock = std::chrono::steady_clock;
  // Wakes the waiting coroutine, or the next wait if none waits now (a
  // notification is kept until a wait takes it).
  void notify();
  // True when notified (since construction or the last wait that returned
  // true), false at `deadline` (Clock::time_point::max(): none). Throws
  // net::system_error(operation_aborted) when the awaiting
  // coroutine is cancelled. One wait at a time.
  net::awaitable<bool> wait_until(Clock::time_point deadline);
  // The same, with cancellation a result instead of an exception (for a
  // watch that is cancelled as a matter of course: an exception costs
  // microseconds).
  enum class Ended { notified, deadline, cancelled };
  net::awaitable<Ended> watch_until(Clock::time_point deadline);

  struct Wait;  // one pending wait (wakeup.cpp)

 private:
  Mutex mutex_;
  bool notified_ WEAVE_GUARDED_BY(mutex_) = false;
  std::weak_ptr<Wait> waiting_ WEAVE_GUARDED_BY(mutex_);  // owned by its timer's pending wait
};

// Waits for a store waiter's next change (a LockWaiter's release, a
// ClaimWaiter's record change) until `until`, holding no thread: true when it
// changed (read with waiter.wait_until(now), so its own view moves on). A
// waiter that cannot wake a coroutine (wake_on_change false) gets a thread
// of the blocking pool that waits.
template <class Waiter>
net::awaitable<bool> wait_for_change(Waiter& waiter, Wakeup::Clock::time_point until) {
  auto wakeup = std::make_shared<Wakeup>();
  if (!waiter.wake_on_change([wakeup] { wakeup->notify(); }))
    co_return co_await run_on(interceptor_pool(), [&waiter, until] { return waiter.wait_until(until); });
  if (!co_await wakeup->wait_until(until)) co_return false;
  co_return waiter.wait_until(Wakeup::Clock::now());
}

}  // namespace weave::detail
