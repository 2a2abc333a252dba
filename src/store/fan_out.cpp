#include "store/fan_out.h"

namespace WEAVE_NAMESPACE::store {

struct FanOut::Batch {
  explicit Batch(std::size_t n) : left(n) {}
  detail::Mutex mutex;
  std::condition_variable cv;
  std::size_t left WEAVE_GUARDED_BY(mutex);
};

FanOut::FanOut(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back("weave-fanout", [this] { work(); });
}

FanOut::~FanOut() {
  {
    detail::Guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void FanOut::work() {
  for (;;) {
    std::function<void()> job;
    {
      detail::Guard g(mutex_);
      mutex_.wait(cv_, [&]() WEAVE_REQUIRES(mutex_) { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

void FanOut::run(std::size_t n, const std::function<void(std::size_t)>& task) {
  if (n == 0) return;
  Batch batch(n - 1);
  {
    detail::Guard g(mutex_);
    for (std::size_t i = 1; i < n; ++i)
      queue_.emplace_back([&batch, &task, i] {
        task(i);
        detail::Guard bg(batch.mutex);
        if (--batch.left == 0) batch.cv.notify_all();
      });
  }
  cv_.notify_all();
  task(0);
  detail::Guard bg(batch.mutex);
  batch.mutex.wait(batch.cv, [&]() WEAVE_REQUIRES(batch.mutex) { return batch.left == 0; });
}

}  // namespace weave::store
