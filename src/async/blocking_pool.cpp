#include "blocking_pool.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/process.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

constexpr auto kIdleEnd = std::chrono::seconds(30);

struct Pool {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  int threads = 0;
  int idle = 0;
};

Pool& pool() {
  // Detached threads (a job may outlive static destruction: they end with
  // the process); in a fork()ed child the parent's threads are not there.
  static Pool* p = [] {
    auto* made = new Pool;
    guard_across_fork(made->mutex, [made] {
      made->jobs.clear();
      made->threads = 0;
      made->idle = 0;
    });
    return made;
  }();
  return *p;
}

void work(Pool& p) {
  std::unique_lock lock(p.mutex);
  for (;;) {
    ++p.idle;
    const bool got = p.cv.wait_for(lock, kIdleEnd, [&] { return !p.jobs.empty(); });
    --p.idle;
    if (!got) {
      --p.threads;
      return;
    }
    std::function<void()> job = std::move(p.jobs.front());
    p.jobs.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // its captures go before the thread counts as idle
    lock.lock();
  }
}

}  // namespace

void run_blocking(std::function<void()> job) {
  Pool& p = pool();
  std::unique_lock lock(p.mutex);
  p.jobs.push_back(std::move(job));
  // Every queued job has an idle thread to take it, or gets a new one.
  if (static_cast<int>(p.jobs.size()) > p.idle) {
    ++p.threads;
    lock.unlock();
    std::thread([&p] { work(p); }).detach();
    return;
  }
  lock.unlock();
  p.cv.notify_one();
}

int blocking_threads() noexcept {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return p.threads;
}

}  // namespace weave::detail
