// Process machinery every feature shares: what survives fork(), background
// threads, cheap clocks, and the locks the analysis knows (thread_annotations.h).
//
// After fork() only the forking thread goes on in the child: a mutex another
// thread held stays locked, a std::thread names a thread that is not there,
// and sockets are shared with the parent. The rule (docs/ARCHITECTURE.md,
// "fork()"): a child never touches what the parent's threads were using. A
// process-wide structure registers its mutex with guard_across_fork(), which
// takes it around fork() and runs the structure's reset in the child; a
// feature's runtime (RuntimeSlot, feature_runtime.h) is made anew in the
// child, the parent's copy left alone, never torn down there.
//
//   static Table* t = [] { auto* made = new Table; guard_across_fork(made->mutex, [made] { made->map.clear(); }); return made; }();
#pragma once

#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

#include "core/thread_annotations.h"
#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// `m` is taken in the pthread_atfork prepare handler (all registered mutexes,
// in no fixed order), given back in the parent, given back in the child and
// then `reset_in_child` runs there. For a handful of process-wide structures.
void guard_across_fork(std::mutex& m, std::function<void()> reset_in_child = {});
// The process-wide T (a struct with a `mutex` member) made on first use and
// never freed (usable during exit), its mutex guarded across fork(): for
// such a structure that needs no reset in the child.
template <class T>
T& fork_guarded() {
  static T* t = [] {
    auto* made = new T;
    guard_across_fork(made->mutex);
    return made;
  }();
  return *t;
}
// Ends a std::thread object of the parent in the child without join or
// terminate (the thread does not exist here).
void forget_thread(std::thread& t) noexcept;
// getpid() without a system call per use (refreshed in a fork()ed child).
pid_t current_pid() noexcept;

// steady_clock's timeline (CLOCK_MONOTONIC) read at its last tick: about 3 ns
// instead of about 25 ns, and never ahead of steady_clock::now() (a tick,
// ~4 ms, behind it, more if the tick is late). Only for a time that may
// safely be early: the start of a lease (it then ends early too, to everyone).
inline std::chrono::steady_clock::time_point coarse_now() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::steady_clock::time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}
// steady_clock::now() as a count of ns (a value an atomic holds).
inline std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// That clock's tick (its clock_getres, read once): how far steady_clock::now()
// may be ahead of coarse_now() while the tick is on time.
inline std::chrono::nanoseconds coarse_tick() noexcept {
  static const std::chrono::nanoseconds tick = [] {
    timespec ts{};
    clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }();
  return tick;
}

// A lock held for a few pointer moves and map lookups, nearly always by one
// thread at a time: one atomic exchange to take, a plain store to give back
// (std::mutex's unlock is a second atomic exchange). Spins, then yields.
class WEAVE_CAPABILITY("mutex") SpinLock {
 public:
  // (Inline when free, the common case; the spinning is out of line.)
  void lock() noexcept WEAVE_ACQUIRE() {
    if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]]
      return;
    spin();
  }
  void unlock() noexcept WEAVE_RELEASE() { locked_.store(false, std::memory_order_release); }
  // In a fork()ed child: a parent's thread may have held it.
  void reset() noexcept { locked_.store(false, std::memory_order_relaxed); }

 private:
  [[gnu::noinline]] void spin() noexcept {
    for (unsigned spins = 0; locked_.exchange(true, std::memory_order_acquire);)
      while (locked_.load(std::memory_order_relaxed))
        if (++spins > 64) std::this_thread::yield();
  }
  std::atomic<bool> locked_{false};
};

// std::mutex as a lock the analysis knows (thread_annotations.h).
class WEAVE_CAPABILITY("mutex") Mutex {
 public:
  void lock() WEAVE_ACQUIRE() { mutex_.lock(); }
  void unlock() WEAVE_RELEASE() { mutex_.unlock(); }
  // The std::mutex itself, for guard_across_fork().
  std::mutex& native() noexcept { return mutex_; }

  // std::condition_variable's waits, with this mutex held (by a Guard):
  // given back while asleep, held again on return. `ready` runs under it,
  // which the analysis is told by its own annotation:
  //   mutex_.wait(cv_, [&]() WEAVE_REQUIRES(mutex_) { return stop_; });
  void wait(std::condition_variable& cv) WEAVE_REQUIRES(this) {
    Adopted held(mutex_);
    cv.wait(held.lock);
  }
  template <class Ready>
  void wait(std::condition_variable& cv, Ready ready) WEAVE_REQUIRES(this) {
    Adopted held(mutex_);
    cv.wait(held.lock, std::move(ready));
  }
  // A time that has come already is not waited for: the kernel would sleep
  // until its timer fired, up to the thread's timer slack (50 us by default)
  // late, where a caller only asks whether something changed.
  template <class Clock, class Duration>
  std::cv_status wait_until(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& t)
      WEAVE_REQUIRES(this) {
    if (Clock::now() >= t) return std::cv_status::timeout;
    Adopted held(mutex_);
    return cv.wait_until(held.lock, t);
  }
  // false: `t` came and `ready()` is still false.
  template <class Clock, class Duration, class Ready>
  bool wait_until(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& t, Ready ready)
      WEAVE_REQUIRES(this) {
    if (holding(ready)) return true;
    if (Clock::now() >= t) return false;
    Adopted held(mutex_);
    return cv.wait_until(held.lock, t, std::move(ready));
  }
  template <class Rep, class Period, class Ready>
  bool wait_for(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& d, Ready ready)
      WEAVE_REQUIRES(this) {
    if (holding(ready)) return true;
    if (d <= d.zero()) return false;
    Adopted held(mutex_);
    return cv.wait_for(held.lock, d, std::move(ready));
  }

 private:
  // `ready()`, run with this mutex held (it names the mutex as its owner
  // does, which the analysis cannot match to `this`).
  template <class Ready>
  static bool holding(Ready& ready) WEAVE_NO_THREAD_SAFETY_ANALYSIS {
    return ready();
  }

  // The caller's hold, lent to the condition variable's wait (which holds it
  // again before it returns or throws) and never given back here.
  struct Adopted {
    explicit Adopted(std::mutex& m) noexcept : lock(m, std::adopt_lock) {}
    ~Adopted() { lock.release(); }
    std::unique_lock<std::mutex> lock;
  };

  std::mutex mutex_;
};

// std::shared_mutex as a lock the analysis knows: Guard for the writers,
// SharedGuard for the readers.
class WEAVE_CAPABILITY("mutex") SharedMutex {
 public:
  void lock() WEAVE_ACQUIRE() { mutex_.lock(); }
  void unlock() WEAVE_RELEASE() { mutex_.unlock(); }
  void lock_shared() WEAVE_ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() WEAVE_RELEASE_SHARED() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

// guard_across_fork() for a Mutex.
inline void guard_across_fork(Mutex& m, std::function<void()> reset_in_child = {}) {
  guard_across_fork(m.native(), std::move(reset_in_child));
}

// std::unique_lock for an annotated lock (thread_annotations.h), which the
// analysis follows: held from construction to destruction, and between an
// unlock() and a lock() not.
template <class Lock>
class WEAVE_SCOPED_CAPABILITY Guard {
 public:
  explicit Guard(Lock& lock) noexcept WEAVE_ACQUIRE(lock) : lock_(lock) { lock_.lock(); }
  ~Guard() WEAVE_RELEASE() {
    if (held_) lock_.unlock();
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  void lock() noexcept WEAVE_ACQUIRE() {
    lock_.lock();
    held_ = true;
  }
  void unlock() noexcept WEAVE_RELEASE() {
    held_ = false;
    lock_.unlock();
  }

 private:
  Lock& lock_;
  bool held_ = true;
};

// std::shared_lock for a SharedMutex: held shared from construction to
// destruction.
class WEAVE_SCOPED_CAPABILITY SharedGuard {
 public:
  explicit SharedGuard(SharedMutex& lock) noexcept WEAVE_ACQUIRE_SHARED(lock) : lock_(lock) { lock_.lock_shared(); }
  ~SharedGuard() WEAVE_RELEASE_GENERIC() { lock_.unlock_shared(); }
  SharedGuard(const SharedGuard&) = delete;
  SharedGuard& operator=(const SharedGuard&) = delete;

 private:
  SharedMutex& lock_;
};

// Names a thread ("weave-renew": at most 15 characters), so `top -H`, gdb
// and perf show whose it is. Every thread Weave starts is named, by the
// thread that starts it, before it goes on: a thread that named itself
// could be seen unnamed until it first runs.
void name_thread(std::thread::native_handle_type thread, const char* name) noexcept;

// A thread owned by an object of one process. Joined by its destructor (or
// join()) in the process that started it; in a fork()ed child, where the
// thread does not exist, forgotten instead of joined (no std::terminate). Every
// feature's own thread is one of these or a BackgroundThread.
class OwnedThread {
 public:
  OwnedThread() noexcept = default;
  // `name`: name_thread()'s.
  template <class F>
  OwnedThread(const char* name, F&& body) : thread_(std::forward<F>(body)), pid_(current_pid()) {
    name_thread(thread_.native_handle(), name);
  }
  OwnedThread(OwnedThread&& o) noexcept : thread_(std::move(o.thread_)), pid_(o.pid_) {}
  OwnedThread& operator=(OwnedThread&& o) noexcept {
    if (this != &o) {
      join();
      thread_ = std::move(o.thread_);
      pid_ = o.pid_;
    }
    return *this;
  }
  ~OwnedThread() { join(); }
  // Started, in this process, and not joined yet.
  bool running() const noexcept { return thread_.joinable() && pid_ == current_pid(); }
  std::thread::id id() const noexcept { return thread_.get_id(); }
  // Waits for the thread (not from itself); forgets a parent's thread in a child.
  void join() noexcept;

 private:
  std::thread thread_;
  pid_t pid_ = 0;
};

// A process-wide T, never freed (handles destroyed late during exit may still
// reach it), whose stop() runs at exit. For background threads.
template <class T>
T& process_wide() {
  static struct Holder {  // one guard to read per call
    T* t = new T;
    ~Holder() { t->stop(); }
  } holder;
  return *holder.t;
}

// One background thread started on first use, its mutex and its wake-up
// (objects of it live for the whole process: process_wide<T>()):
// stop() at exit (process_wide), and in a fork()ed child a fresh start (the
// parent's thread is not there; forget_in_child() drops the parent's work).
class BackgroundThread {
 public:
  void stop();

 protected:
  explicit BackgroundThread(const char* name);  // name_thread()'s (a string literal)
  virtual ~BackgroundThread() = default;
  virtual void run() = 0;
  virtual void forget_in_child() = 0;
  void start_locked() WEAVE_REQUIRES(mutex_);

  Mutex mutex_;
  std::condition_variable cv_;
  bool stop_ WEAVE_GUARDED_BY(mutex_) = false;

 private:
  const char* name_;
  bool started_ WEAVE_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // started under mutex_; stop() joins it after setting stop_
};

}  // namespace weave::detail
