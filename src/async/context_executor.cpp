#include "async/context_executor.h"

#include "weave/asio.h"
#include <mutex>
#include <thread>

#include "core/lease_core.h"

namespace WEAVE_NAMESPACE::detail {

namespace {
using net::cancellation_type;
}  // namespace

// Spare cells, linked through the cells themselves (taking one back never
// allocates, so it cannot fail) and owned by themselves (self_) while
// spare. Never freed: an executor may outlive its call.
struct CellPool {
  struct List {
    CallCell* head = nullptr;
    std::size_t count = 0;
    void push(CallCell* c) noexcept {
      c->next_spare_ = head;
      head = c;
      ++count;
    }
    CallCell* pop() noexcept {
      CallCell* c = head;
      if (c) {
        head = c->next_spare_;
        c->next_spare_ = nullptr;
        --count;
      }
      return c;
    }
  };
  struct Shared {
    Mutex lock;
    List list WEAVE_GUARDED_BY(lock);
  };
  static Shared& shared() noexcept {
    static Shared* const pool = new Shared;  // (never destroyed)
    return *pool;
  }
  // This thread's spares (no lock); beyond kKept, half go to the shared
  // list, and all of them when the thread ends. Trivially destructible, so
  // still readable from other thread-exit destructors, as `gone` is.
  static constexpr std::size_t kKept = 64;
  static thread_local List local;
  static thread_local bool gone;
  struct ThreadEnd {
    ~ThreadEnd() {
      give(local, 0);
      gone = true;
    }
  };
  static thread_local ThreadEnd thread_end;

  // Moves spares from `from` to the shared list until `keep` are left.
  static void give(List& from, std::size_t keep) noexcept {
    if (from.count <= keep) return;
    Shared& s = shared();
    Guard g(s.lock);
    while (from.count > keep) s.list.push(from.pop());
  }
  static CallCell* take() noexcept {
    if (gone) {
      Shared& s = shared();
      Guard g(s.lock);
      return s.list.pop();
    }
    static_cast<void>(&thread_end);  // (made on first use: its destructor hands this thread's spares on)
    if (!local.head) {
      Shared& s = shared();
      Guard g(s.lock);
      while (s.list.head && local.count < kKept / 2) local.push(s.list.pop());
    }
    return local.pop();
  }
  static void put(CallCell* c) noexcept {
    if (gone) {
      Shared& s = shared();
      Guard g(s.lock);
      s.list.push(c);
      return;
    }
    static_cast<void>(&thread_end);  // (a thread may give back cells it never took)
    local.push(c);
    if (local.count > kKept) give(local, kKept / 2);
  }
};

thread_local CellPool::List CellPool::local;
thread_local bool CellPool::gone = false;
thread_local CellPool::ThreadEnd CellPool::thread_end;

std::shared_ptr<CallCell> CallCell::acquire() {
  if (CallCell* spare = CellPool::take()) return std::move(spare->self_);
  return std::make_shared<CallCell>();
}

void CallCell::retire(std::shared_ptr<CallCell> cell) noexcept {
  std::shared_ptr<const ContextLink> context;
  net::any_io_executor executor;
  {
    Guard g(cell->lock);
    cell->wait_for_other_emitter();
    cell->own_.slot().clear();  // co_spawn's handler, which holds the caller's frame
    context = std::move(cell->head);
    if (cell->executor_) executor = std::move(cell->executor_);
    cell->io_ = nullptr;
    ++cell->generation;
    cell->running_ = 0;
    cell->emitter_ = std::thread::id();
    cell->pending_ = cell->pending_loss_ = cancellation_type::none;
    cell->loss_armed_ = 0;
    cell->unheard_ = nullptr;
    cell->target_ = &cell->own_;
    cell->woken_ = false;
  }
  // (Dropped outside the lock: the last link may end a lease's memory.)
  context.reset();
  executor = {};
  CallCell* const spare = cell.get();
  spare->self_ = std::move(cell);
  CellPool::put(spare);
}

void CallCell::wait_for_other_emitter() noexcept {
  const std::thread::id me = std::this_thread::get_id();
  while (emitter_ != std::thread::id() && emitter_ != me) {
    lock.unlock();  // (the caller's Guard still holds it when this returns)
    std::this_thread::yield();
    lock.lock();
  }
}

void CallCell::wake_locked() noexcept {
  if (woken_ || (!io_ && !executor_)) return;  // (not bound yet: the first handler's end delivers it)
  // Posted under the lock: retire(), which the executor's shutdown reaches
  // through the call's frames, waits for it, so the executor is alive. The
  // handler runs as one of the call's: its end emits.
  try {
    if (io_)
      net::post(ContextExecutor<net::io_context::executor_type>(io_->get_executor(), this, generation),
                [] {});
    else
      net::post(executor_, [] {});
    woken_ = true;
  } catch (...) {
    // Out of memory: delivered when a handler of the call next ends.
  }
}

void CallCell::cancel(std::uint64_t gen, cancellation_type type, bool loss) noexcept {
  Guard g(lock);
  if (generation != gen) return;         // the call ended
  if (loss && loss_armed_ == 0) return;  // the body it was meant for ended
  (loss ? pending_loss_ : pending_) |= type;
  if (running_ > 0) return;  // emitted as the running handler ends
  if (!io_ || !io_->get_executor().running_in_this_thread()) {
    wake_locked();  // or by a handler posted for it
    return;
  }
  // This thread runs the call's io_context: emitted now, as by a handler of
  // the call that ends here.
  ++running_;
  g.unlock();
  leave(gen);
}

void CallCell::arm_loss(LeaseCore& lease) noexcept {
  Guard g(lock);
  ++loss_armed_;
  if (!unheard_) {
    unheard_ = &lease;
    return;
  }
  const std::uint64_t gen = generation;
  g.unlock();
  listen(lease, gen);
}

void CallCell::forget_loss(LeaseCore& lease) noexcept {
  Guard g(lock);
  // An emission listening to this lease ends before the lease can (this
  // may run outside any handler: a frame destroyed without resuming).
  wait_for_other_emitter();
  if (loss_armed_ > 0) --loss_armed_;
  if (unheard_ == &lease) unheard_ = nullptr;
  pending_loss_ = cancellation_type::none;
}

void CallCell::listen(LeaseCore& lease, std::uint64_t gen) noexcept {
  lease.listen_for_loss({&CallCell::heard_loss, weak_from_this(), gen});
}

void CallCell::heard_loss(void* cell, std::uint64_t gen) noexcept {
  static_cast<CallCell*>(cell)->cancel(gen, cancellation_type::terminal, /*loss=*/true);
}

net::cancellation_signal* CallCell::retarget(net::cancellation_signal* signal) noexcept {
  Guard g(lock);
  wait_for_other_emitter();
  return std::exchange(target_, signal);
}

void CallCell::hold_emissions() noexcept {
  Guard g(lock);
  wait_for_other_emitter();
  ++running_;
  woken_ = false;  // (as enter())
}

void CallCell::release_emissions() noexcept {
  Guard g(lock);
  if (--running_ > 0) return;
  if ((pending_ | pending_loss_) != cancellation_type::none || unheard_) wake_locked();
}

bool CallCell::enter(std::uint64_t gen, std::shared_ptr<const ContextLink>& context) noexcept {
  Guard g(lock);
  if (generation != gen) return false;
  wait_for_other_emitter();
  if (generation != gen) return false;
  ++running_;
  woken_ = false;  // whoever brings running_ back to 0 delivers what is pending
  context = head;
  return true;
}

void CallCell::leave(std::uint64_t gen) noexcept {
  Guard g(lock);
  if (generation != gen) return;  // retired meanwhile (the call ended inside this handler)
  for (;;) {
    if (--running_ > 0) return;
    // None of the call's handlers runs: the call is suspended (or ended).
    // This thread runs the call's executor: an emission from here runs
    // co_spawn's cancellation handler inline.
    woken_ = false;
    const cancellation_type type = pending_ | pending_loss_;
    LeaseCore* const unheard = std::exchange(unheard_, nullptr);
    if (type == cancellation_type::none && !unheard) {
      emitter_ = std::thread::id();
      return;
    }
    // As an emission: the call's handlers on other threads wait for it, so
    // the rest cannot end and give the lease back meanwhile.
    pending_ = pending_loss_ = cancellation_type::none;
    ++running_;
    emitter_ = std::this_thread::get_id();
    net::cancellation_signal* const target = target_;
    g.unlock();
    if (unheard) listen(*unheard, gen);  // lost already: heard at once, emitted on the next turn
    if (type != cancellation_type::none) target->emit(type);
    g.lock();
    if (generation != gen) return;
  }
}

}  // namespace weave::detail
