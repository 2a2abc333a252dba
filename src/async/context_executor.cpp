#include "async/context_executor.h"

#include <mutex>

#include "core/lease_core.h"
#include <thread>
#include <vector>

namespace WEAVE_NAMESPACE::detail {

namespace {
using boost::asio::cancellation_type;

// Spare cells. Never destroyed, nor is any cell: an executor may outlive its
// call (context_executor.h).
struct SharedCells {
  std::mutex lock;
  std::vector<std::shared_ptr<CallCell>> cells;
};
SharedCells& shared_cells() {
  static SharedCells* const cells = new SharedCells;
  return *cells;
}

// This thread's spare cells (no lock); beyond kKept they go to the shared
// ones, and all of them when the thread ends.
constexpr std::size_t kKept = 64;
struct ThreadCells {
  std::vector<std::shared_ptr<CallCell>> cells;
  void give_back(std::size_t keep) noexcept {
    if (cells.size() <= keep) return;
    SharedCells& shared = shared_cells();
    std::lock_guard g(shared.lock);
    try {
      while (cells.size() > keep) {
        shared.cells.push_back(std::move(cells.back()));
        cells.pop_back();
      }
    } catch (...) {
      // Out of memory: the rest stay here (push_back leaves its argument).
    }
  }
  ~ThreadCells() { give_back(0); }
};
ThreadCells& thread_cells() {
  thread_local ThreadCells cells;
  return cells;
}
}  // namespace

std::shared_ptr<CallCell> CallCell::acquire() {
  std::vector<std::shared_ptr<CallCell>>& mine = thread_cells().cells;
  if (mine.empty()) {
    SharedCells& shared = shared_cells();
    std::lock_guard g(shared.lock);
    while (!shared.cells.empty() && mine.size() < kKept / 2) {
      mine.push_back(std::move(shared.cells.back()));
      shared.cells.pop_back();
    }
  }
  if (mine.empty()) return std::make_shared<CallCell>();
  std::shared_ptr<CallCell> cell = std::move(mine.back());
  mine.pop_back();
  return cell;
}

void CallCell::retire(std::shared_ptr<CallCell> cell) noexcept {
  std::shared_ptr<const ContextLink> context;
  {
    std::unique_lock g(cell->lock);
    cell->wait_for_other_emitter(g);
    cell->own_.slot().clear();  // co_spawn's handler, which holds the caller's frame
    context = std::move(cell->head);
    ++cell->generation;
    cell->running_ = 0;
    cell->emitter_ = std::thread::id();
    cell->pending_ = cell->pending_loss_ = cancellation_type::none;
    cell->loss_armed_ = 0;
    cell->unheard_ = nullptr;
    cell->target_ = &cell->own_;
  }
  context.reset();  // (outside the lock: the last link may end a lease's memory)
  ThreadCells& mine = thread_cells();
  try {
    mine.cells.push_back(std::move(cell));
  } catch (...) {
    return;  // out of memory: the cell is leaked rather than freed (it may still be pointed to)
  }
  mine.give_back(kKept);
}

void CallCell::wait_for_other_emitter(std::unique_lock<SpinLock>& g) noexcept {
  const std::thread::id me = std::this_thread::get_id();
  while (emitter_ != std::thread::id() && emitter_ != me) {
    g.unlock();
    std::this_thread::yield();
    g.lock();
  }
}

void CallCell::cancel(std::uint64_t gen, cancellation_type type, bool loss) noexcept {
  std::unique_lock g(lock);
  if (generation != gen) return;              // the call ended
  if (loss && loss_armed_ == 0) return;       // the body it was meant for ended
  if (running_ > 0) {
    (loss ? pending_loss_ : pending_) |= type;  // emitted as the running handlers end
    return;
  }
  ++running_;
  emitter_ = std::this_thread::get_id();
  boost::asio::cancellation_signal* const target = target_;
  g.unlock();
  target->emit(type);
  leave(gen);
}

void CallCell::arm_loss(LeaseCore& lease) noexcept {
  std::unique_lock g(lock);
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
  std::lock_guard g(lock);
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

boost::asio::cancellation_signal* CallCell::retarget(boost::asio::cancellation_signal* signal) noexcept {
  std::lock_guard g(lock);
  return std::exchange(target_, signal);
}

bool CallCell::enter(std::uint64_t gen, std::shared_ptr<const ContextLink>& context) noexcept {
  std::unique_lock g(lock);
  if (generation != gen) return false;
  wait_for_other_emitter(g);
  if (generation != gen) return false;
  ++running_;
  context = head;
  return true;
}

void CallCell::leave(std::uint64_t gen) noexcept {
  std::unique_lock g(lock);
  if (generation != gen) return;  // retired meanwhile (the call ended inside this handler)
  for (;;) {
    if (--running_ > 0) return;
    // None of the call's handlers runs: the call is suspended (or ended).
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
    boost::asio::cancellation_signal* const target = target_;
    g.unlock();
    if (unheard) listen(*unheard, gen);  // lost already: heard at once, emitted on the next turn
    if (type != cancellation_type::none) target->emit(type);
    g.lock();
    if (generation != gen) return;
  }
}

}  // namespace weave::detail
