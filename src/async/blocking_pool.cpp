#include "async/blocking_pool.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/process.h"

namespace WEAVE_NAMESPACE::detail {

constexpr auto kIdleEnd = std::chrono::seconds(30);

struct BlockingPool::State {
  explicit State(int max) : max_threads(max) {}
  Mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs WEAVE_GUARDED_BY(mutex);
  const int max_threads;  // 0: no cap
  int threads WEAVE_GUARDED_BY(mutex) = 0;
  std::uint64_t jobs_run WEAVE_GUARDED_BY(mutex) = 0;
  int idle WEAVE_GUARDED_BY(mutex) = 0;

  void work() {
    Guard lock(mutex);
    for (;;) {
      ++idle;
      const bool got = mutex.wait_for(cv, kIdleEnd, [&]() WEAVE_REQUIRES(mutex) { return !jobs.empty(); });
      --idle;
      if (!got) {
        --threads;
        return;
      }
      std::function<void()> job = std::move(jobs.front());
      jobs.pop_front();
      lock.unlock();
      job();
      job = nullptr;  // its captures go before the thread counts as idle
      lock.lock();
    }
  }
};

BlockingPool::BlockingPool(int max_threads, Jobs jobs)
    : state_(std::make_shared<State>(max_threads)), jobs_(jobs) {
  // Its threads are detached (a job may outlive static destruction: they end
  // with the process); in a fork()ed child the parent's are not there.
  State* s = state_.get();
  guard_across_fork(s->mutex, [s]() WEAVE_NO_THREAD_SAFETY_ANALYSIS {  // (the child's one thread)
    s->jobs.clear();
    s->threads = 0;
    s->idle = 0;
  });
}

void BlockingPool::run(std::function<void()> job) {
  Guard lock(state_->mutex);
  ++state_->jobs_run;
  state_->jobs.push_back(std::move(job));
  // A queued job has an idle thread to take it, or gets a new one if the cap allows.
  if (static_cast<int>(state_->jobs.size()) > state_->idle &&
      (state_->max_threads == 0 || state_->threads < state_->max_threads)) {
    ++state_->threads;
    lock.unlock();
    std::thread worker([s = state_] { s->work(); });
    detail::name_thread(worker.native_handle(), "weave-blocking");
    worker.detach();
    return;
  }
  lock.unlock();
  state_->cv.notify_one();
}

std::uint64_t BlockingPool::jobs() const noexcept {
  Guard lock(state_->mutex);
  return state_->jobs_run;
}

net::execution_context::id JobsInFlight::id;

JobsInFlight::JobsInFlight(net::execution_context& context)
    : net::execution_context::service(context) {}

void JobsInFlight::begin() {
  Guard lock(mutex_);
  ++running_;
}

void JobsInFlight::end() noexcept {
  Guard lock(mutex_);
  if (--running_ == 0) done_.notify_all();
}

void JobsInFlight::shutdown() {
  Guard lock(mutex_);
  mutex_.wait(done_, [this]() WEAVE_REQUIRES(mutex_) { return running_ == 0; });
}

BlockingPool& interceptor_pool() {
  static auto* pool = new BlockingPool(0, BlockingPool::Jobs::may_wait_for_their_context);  // usable during exit
  return *pool;
}

BlockingPool& store_pool() {
  static auto* pool = new BlockingPool(8, BlockingPool::Jobs::end_by_themselves);
  return *pool;
}

}  // namespace weave::detail
