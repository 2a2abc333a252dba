// Process machinery (process.h). guard_across_fork: every registered mutex is
// taken in the pthread_atfork prepare handler, released in the parent, and
// released then reset in the child.
#include "core/process.h"

#include <pthread.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <cstdlib>
#include <new>
#include <thread>


namespace WEAVE_NAMESPACE::detail {
namespace {

struct Guarded {
  std::mutex* mutex;
  std::function<void()> reset;
};

// A fixed array: prepare reads the entries without `mutex` while another
// thread may append one (a growing vector would move them).
using GuardList = std::array<Guarded, 32>;

struct Guards {
  Mutex mutex;                      // serialises appends; never held while waiting for a guarded mutex
  GuardList all;                    // [0, count): read by prepare() without `mutex` (see GuardList)
  std::atomic<std::size_t> count{0};
  std::size_t held WEAVE_GUARDED_BY(mutex) = 0;  // prepare took all[0, held) (and `mutex`)
};

// All of them or none, in no fixed order: another thread may hold one and
// want another (std::lock's algorithm over a list).
void lock_all(GuardList& all, std::size_t n) {
  if (n == 0) return;
  for (std::size_t first = 0;;) {
    all[first].mutex->lock();
    std::size_t missed = n;
    for (std::size_t i = 0; i < n; ++i)
      if (i != first && !all[i].mutex->try_lock()) {
        missed = i;
        break;
      }
    if (missed == n) return;
    for (std::size_t i = 0; i < missed; ++i)  // the ones taken before the miss
      if (i != first) all[i].mutex->unlock();
    all[first].mutex->unlock();
    first = missed;  // wait for the busy one next
    std::this_thread::yield();
  }
}

void unlock_all(GuardList& all, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) all[i].mutex->unlock();
}

Guards& guards();

std::atomic<pid_t> cached_pid{0};

// `mutex` is held from prepare() through the fork to in_parent() or
// in_child(), which the analysis cannot follow.
void prepare() WEAVE_NO_THREAD_SAFETY_ANALYSIS {
  Guards& gs = guards();
  for (;;) {
    const std::size_t n = gs.count.load(std::memory_order_acquire);
    lock_all(gs.all, n);
    gs.mutex.lock();
    if (gs.count.load(std::memory_order_acquire) == n) {
      gs.held = n;
      return;  // `mutex` stays taken through the fork
    }
    gs.mutex.unlock();  // one was registered meanwhile: take it too
    unlock_all(gs.all, n);
  }
}

void in_parent() WEAVE_NO_THREAD_SAFETY_ANALYSIS {
  Guards& gs = guards();
  unlock_all(gs.all, gs.held);
  gs.mutex.unlock();
}

void in_child() WEAVE_NO_THREAD_SAFETY_ANALYSIS {
  cached_pid.store(::getpid(), std::memory_order_relaxed);
  Guards& gs = guards();
  unlock_all(gs.all, gs.held);
  gs.mutex.unlock();
  for (std::size_t i = 0; i < gs.held; ++i)
    if (gs.all[i].reset) gs.all[i].reset();
}

Guards& guards() {
  static Guards* g = [] {
    auto* made = new Guards;  // usable during exit
    ::pthread_atfork(prepare, in_parent, in_child);
    return made;
  }();
  return *g;
}

}  // namespace

void guard_across_fork(std::mutex& m, std::function<void()> reset_in_child) {
  Guards& g = guards();
  Guard lock(g.mutex);
  const std::size_t n = g.count.load(std::memory_order_relaxed);
  if (n == g.all.size()) std::abort();  // a handful of process-wide structures use this
  g.all[n] = Guarded{&m, std::move(reset_in_child)};
  g.count.store(n + 1, std::memory_order_release);
}

pid_t current_pid() noexcept {
  pid_t p = cached_pid.load(std::memory_order_relaxed);
  if (p == 0) {
    guards();  // registers the fork handler that refreshes the cache first
    p = ::getpid();
    cached_pid.store(p, std::memory_order_relaxed);
  }
  return p;
}

void forget_thread(std::thread& t) noexcept {
  // Reusing the storage ends the old object's life without its destructor
  // (which would call std::terminate for a joinable thread).
  new (&t) std::thread();
}

void OwnedThread::join() noexcept {
  if (!thread_.joinable()) return;
  if (pid_ != current_pid()) {
    forget_thread(thread_);  // the parent's: not in this process
    return;
  }
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();  // its own last owner: it ends by itself
    return;
  }
  thread_.join();
}

void name_thread(std::thread::native_handle_type thread, const char* name) noexcept {
  char shown[16] = {};  // the kernel keeps 15 characters
  std::strncpy(shown, name, sizeof shown - 1);
  ::pthread_setname_np(thread, shown);
}

BackgroundThread::BackgroundThread(const char* name) : name_(name) {
  guard_across_fork(mutex_, [this]() WEAVE_NO_THREAD_SAFETY_ANALYSIS {  // (the child's one thread)
    forget_thread(thread_);
    started_ = stop_ = false;
    new (&cv_) std::condition_variable();  // the parent's thread may have been waiting on it
    forget_in_child();
  });
}

void BackgroundThread::start_locked() {
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
  name_thread(thread_.native_handle(), name_);
}

void BackgroundThread::stop() {
  {
    Guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace weave::detail
