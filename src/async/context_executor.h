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
//
// The executor holds its cell by pointer and generation, not by a shared
// count: asio copies an executor many times per call, and a shared count
// per copy cost more than the rest of the executor's work. Cells come from a
// pool and are never freed, so an executor that outlives its call (a handler
// the body left behind) still points to a cell, and tells by the generation
// that its call has ended.
#pragma once

#include <cstdint>
#include <memory>
#include <thread>
#include <utility>

#include "core/call_context.h"
#include "weave/abi.h"
#include "weave/asio.h"

namespace WEAVE_NAMESPACE::detail {

class LeaseCore;

// An asynchronous call's context (ContextCell) and its cancellation. The
// call's coroutines are spawned bound to slot(); cancel() reaches their
// pending operation from any thread. A cancellation is emitted only from a
// handler of the call, as it ends (leave()): co_spawn's cancellation handler
// dispatches its emission through the call's executor, so one emitted from
// elsewhere would run later, perhaps once the call has ended and its slot's
// memory went back to asio. This relies on what asio's executors do: a
// dispatch from a thread that runs the executor runs inline, a post queues.
class CallCell : public ContextCell, public std::enable_shared_from_this<CallCell> {
 public:
  CallCell() = default;
  CallCell(const CallCell&) = delete;
  CallCell& operator=(const CallCell&) = delete;

  // A cell for one call (its generation names the call), from the pool.
  static std::shared_ptr<CallCell> acquire();
  // The call ended: the cell drops what its slot holds, its context and its
  // executor, moves to its next generation and goes back to the pool (which
  // never frees a cell, and takes it back without allocating). Waits for an
  // emission another thread is making.
  static void retire(std::shared_ptr<CallCell> cell) noexcept;

  net::cancellation_slot slot() noexcept { return own_.slot(); }
  // Where the call runs: an io_context, or another executor (its
  // ContextExecutor); where a cancellation that comes while none of the
  // call's handlers runs is emitted. Before the call is spawned (no other
  // thread knows the cell yet).
  void bind(net::io_context& io) noexcept WEAVE_NO_THREAD_SAFETY_ANALYSIS { io_ = &io; }
  void bind(net::any_io_executor call_executor) noexcept WEAVE_NO_THREAD_SAFETY_ANALYSIS {
    executor_ = std::move(call_executor);
  }
  // Emits `type` at the pending operation of the call of `gen` (nothing if
  // it ended): as the call's running handler ends; when none runs, at once
  // on a thread that runs the call's io_context (co_spawn's handler then
  // emits inline), else from a handler posted to the call's executor.
  // `loss`: a lost lease's, heard only between arm_loss() and forget_loss()
  // (while the body it is meant for runs).
  void cancel(std::uint64_t gen, net::cancellation_type type, bool loss) noexcept;
  // The rest of the call runs holding `lease`, whose loss cancels it
  // (terminal) until forget_loss(lease), which also drops a loss not emitted
  // yet. The lease is listened to once the call suspends (leave()), not
  // before: until then there is no pending operation to cancel, and a call
  // that never suspends pays nothing for it. One lease waits so; a second,
  // nested one is listened to at once.
  void arm_loss(LeaseCore& lease) noexcept;
  void forget_loss(LeaseCore& lease) noexcept;
  // While a plain interceptor's proceed() runs the rest of the call as
  // coroutines of their own, bound to `signal`: cancellations go there.
  // Returns the signal they went to before. Waits for an emission another
  // thread is making (to the signal it replaces).
  net::cancellation_signal* retarget(net::cancellation_signal* signal) noexcept;
  // From a thread outside the call's executor (the blocking pool), around
  // what no emission may cross (spawning the rest bound to a new signal and
  // retargeting to it): emissions wait as while a handler of the call runs.
  void hold_emissions() noexcept;
  void release_emissions() noexcept;

  // Around each handler of the call of `gen` (ContextExecutor): enter()
  // gives the call's context to install (one lock for both), or false when
  // the call has ended; leave() only after an enter() that returned true.
  bool enter(std::uint64_t gen, std::shared_ptr<const ContextLink>& context) noexcept;
  void leave(std::uint64_t gen) noexcept;

 private:
  friend struct CellPool;

  // An emission runs as one of the call's handlers, unlocked (co_spawn's
  // cancellation handler dispatches, which may run a handler inline): the
  // emitting thread's handlers run, other threads' wait until it ends.
  // Under ContextCell::lock, as the head is.
  int running_ WEAVE_GUARDED_BY(lock) = 0;
  std::thread::id emitter_ WEAVE_GUARDED_BY(lock);
  net::cancellation_type pending_ WEAVE_GUARDED_BY(lock) = net::cancellation_type::none;
  net::cancellation_type pending_loss_ WEAVE_GUARDED_BY(lock) = net::cancellation_type::none;
  int loss_armed_ WEAVE_GUARDED_BY(lock) = 0;            // arm_loss() - forget_loss(): nested calls of one cell
  LeaseCore* unheard_ WEAVE_GUARDED_BY(lock) = nullptr;  // armed, not listened to yet
  net::cancellation_signal own_;
  net::cancellation_signal* target_ WEAVE_GUARDED_BY(lock) = &own_;
  // Set by bind() before any other thread knows the cell; cleared by retire().
  net::io_context* io_ WEAVE_GUARDED_BY(lock) = nullptr;
  net::any_io_executor executor_ WEAVE_GUARDED_BY(lock);  // when not an io_context's
  bool woken_ WEAVE_GUARDED_BY(lock) = false;  // a handler is posted to deliver what is pending
  // In the pool: the spare's own owner, and the next spare.
  std::shared_ptr<CallCell> self_;
  CallCell* next_spare_ = nullptr;

  // Lets go of the lock while another thread emits; holds it again on return.
  void wait_for_other_emitter() noexcept WEAVE_REQUIRES(lock);
  void wake_locked() noexcept WEAVE_REQUIRES(lock);
  void listen(LeaseCore& lease, std::uint64_t gen) noexcept;
  static void heard_loss(void* cell, std::uint64_t gen) noexcept;
};

template <class Inner>
class ContextExecutor {
 public:
  ContextExecutor(Inner inner, CallCell* cell, std::uint64_t gen) noexcept
      : inner_(std::move(inner)), cell_(cell), gen_(gen) {}

  template <class F>
  void execute(F&& f) const {
    net::execute(inner_, [f = std::forward<F>(f), cell = cell_, gen = gen_]() mutable {
      // A handler of a call that ended runs outside any call.
      std::shared_ptr<const ContextLink> context;
      const bool live = cell->enter(gen, context);
      struct Installed {
        CallCell* cell;  // null: not entered
        std::uint64_t gen;
        std::shared_ptr<const ContextLink> saved_head;
        InstalledCell saved_cell;
        ~Installed() {
          context_head() = std::move(saved_head);
          current_cell() = saved_cell;
          if (cell) cell->leave(gen);
        }
      };
      const Installed installed{live ? cell : nullptr, gen, std::exchange(context_head(), std::move(context)),
                                std::exchange(current_cell(), live ? InstalledCell{cell, gen} : InstalledCell{})};
      std::move(f)();
    });
  }

  friend bool operator==(const ContextExecutor& a, const ContextExecutor& b) noexcept {
    return a.inner_ == b.inner_ && a.cell_ == b.cell_ && a.gen_ == b.gen_;
  }
  // Which call's handlers it runs: a cell and its generation; and on what.
  const CallCell* cell() const noexcept { return cell_; }
  const Inner& inner() const noexcept { return inner_; }
  std::uint64_t generation() const noexcept { return gen_; }
  friend bool operator!=(const ContextExecutor& a, const ContextExecutor& b) noexcept { return !(a == b); }

  template <class Property>
  auto query(const Property& p) const -> decltype(net::query(std::declval<const Inner&>(), p)) {
    return net::query(inner_, p);
  }
  template <class Property>
  auto require(const Property& p) const
      -> ContextExecutor<std::decay_t<decltype(net::require(std::declval<const Inner&>(), p))>> {
    return {net::require(inner_, p), cell_, gen_};
  }
  template <class Property>
  auto prefer(const Property& p) const
      -> ContextExecutor<std::decay_t<decltype(net::prefer(std::declval<const Inner&>(), p))>> {
    return {net::prefer(inner_, p), cell_, gen_};
  }

 private:
  Inner inner_;
  CallCell* cell_;
  std::uint64_t gen_;
};

}  // namespace weave::detail
