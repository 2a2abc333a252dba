#include "store/fan_out.h"

namespace WEAVE_NAMESPACE::store {

struct FanOut::Batch {
  std::mutex mutex;
  std::condition_variable cv;
  std::size_t left = 0;
};

FanOut::FanOut(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back("weave-fanout", [this] { work(); });
}

FanOut::~FanOut() {
  {
    std::lock_guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void FanOut::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock g(mutex_);
      cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

void FanOut::run(std::size_t n, const std::function<void(std::size_t)>& task) {
  if (n == 0) return;
  Batch batch;
  batch.left = n - 1;
  {
    std::lock_guard g(mutex_);
    for (std::size_t i = 1; i < n; ++i)
      queue_.emplace_back([&batch, &task, i] {
        task(i);
        std::lock_guard bg(batch.mutex);
        if (--batch.left == 0) batch.cv.notify_all();
      });
  }
  cv_.notify_all();
  task(0);
  std::unique_lock bg(batch.mutex);
  batch.cv.wait(bg, [&] { return batch.left == 0; });
}

}  // namespace weave::store
