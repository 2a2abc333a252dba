// The executor an asynchronous call runs on: the caller's, wrapped so that
// every handler it runs (each resumption of the call's coroutines, whichever
// thread runs it) runs with the call's context (core/call_context.h)
// installed as the thread's, and the thread's own put back afterwards; what
// the call pushes meanwhile is written through to its cell
// (set_context_head). This is how current_lease() and lock reentrancy
// follow a coroutine across co_await without a thread owning anything.
//
// The cell is also how the call is cancelled from another thread (a lost
// lease, the caller's cancellation): CallCell emits a cancellation only
// while none of the call's handlers runs, since a cancellation slot is not
// thread-safe and each handler of the call runs through this executor.
#pragma once

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/require.hpp>
#include <memory>
#include <thread>
#include <utility>

#include "core/call_context.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// An asynchronous call's context (ContextCell) and its cancellation. The
// call's coroutines are spawned bound to slot(); cancel() reaches their
// pending operation from any thread.
class WEAVE_API CallCell : public ContextCell {
 public:
  CallCell() = default;
  CallCell(const CallCell&) = delete;
  CallCell& operator=(const CallCell&) = delete;

  boost::asio::cancellation_slot slot() noexcept { return own_.slot(); }
  // The call ended: drops what its slot holds (co_spawn's handler holds
  // the call's executor, which holds this cell).
  void disconnect() noexcept;
  // Emits `type` at the call's pending operation: now when none of the
  // call's handlers runs, else as the running one ends. `loss`: a lost
  // lease's, heard only between arm_loss() and forget_loss() (while the body
  // it is meant for runs); forget_loss() also drops one not emitted yet.
  void cancel(boost::asio::cancellation_type type, bool loss) noexcept;
  void arm_loss() noexcept;
  void forget_loss() noexcept;
  // While a plain interceptor's proceed() runs the rest of the call as
  // coroutines of their own, bound to `signal`: cancellations go there.
  // Returns the signal they went to before.
  boost::asio::cancellation_signal* retarget(boost::asio::cancellation_signal* signal) noexcept;

  // Around each handler of the call (ContextExecutor); enter() returns the
  // call's context to install (one lock for both).
  std::shared_ptr<const ContextLink> enter() noexcept;
  void leave() noexcept;

 private:
  // An emission runs as one of the call's handlers, unlocked (co_spawn's
  // cancellation handler dispatches, which may run a handler inline): the
  // emitting thread's handlers run, other threads' wait until it ends.
  // Under ContextCell::lock, as the head is.
  int running_ = 0;
  std::thread::id emitter_;
  boost::asio::cancellation_type pending_ = boost::asio::cancellation_type::none;
  boost::asio::cancellation_type pending_loss_ = boost::asio::cancellation_type::none;
  int loss_armed_ = 0;  // arm_loss() - forget_loss(): nested calls of one cell
  boost::asio::cancellation_signal own_;
  boost::asio::cancellation_signal* target_ = &own_;
};

template <class Inner>
class ContextExecutor {
 public:
  ContextExecutor(Inner inner, std::shared_ptr<CallCell> cell) noexcept
      : inner_(std::move(inner)), cell_(std::move(cell)) {}

  template <class F>
  void execute(F&& f) const {
    inner_.execute([f = std::forward<F>(f), cell = cell_]() mutable {
      struct Installed {
        CallCell& cell;
        std::shared_ptr<const ContextLink> saved_head;
        ContextCell* saved_cell;
        ~Installed() {
          context_head() = std::move(saved_head);
          current_cell() = saved_cell;
          cell.leave();
        }
      };
      const Installed installed{*cell, std::exchange(context_head(), cell->enter()),
                                std::exchange(current_cell(), cell.get())};
      std::move(f)();
    });
  }

  friend bool operator==(const ContextExecutor& a, const ContextExecutor& b) noexcept {
    return a.inner_ == b.inner_ && a.cell_ == b.cell_;
  }
  friend bool operator!=(const ContextExecutor& a, const ContextExecutor& b) noexcept { return !(a == b); }

  template <class Property>
  auto query(const Property& p) const -> decltype(boost::asio::query(std::declval<const Inner&>(), p)) {
    return boost::asio::query(inner_, p);
  }
  template <class Property>
  auto require(const Property& p) const
      -> ContextExecutor<std::decay_t<decltype(boost::asio::require(std::declval<const Inner&>(), p))>> {
    return {boost::asio::require(inner_, p), cell_};
  }
  template <class Property>
  auto prefer(const Property& p) const
      -> ContextExecutor<std::decay_t<decltype(boost::asio::prefer(std::declval<const Inner&>(), p))>> {
    return {boost::asio::prefer(inner_, p), cell_};
  }

 private:
  Inner inner_;
  std::shared_ptr<CallCell> cell_;
};

}  // namespace weave::detail
