// store::FeedKeeper: a broadcast channel's feed kept subscribed, and
// whether it is complete (live()).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/process.h"
#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

// A subscription to a broadcast channel whose messages carry state (cache
// invalidations, shared circuit breakers' changes): made at start(), made
// again by a thread of its own whenever it went down, so no caller ever
// waits for a reconnection. live() says whether the feed is known to be
// complete up to about now: a reader that may have missed a message must
// not be trusted, so whoever keeps it says exactly when it went down and
// when it is back.
class FeedKeeper {
 public:
  struct Handlers {
    std::function<void(std::string_view payload)> on_message;  // a message on the current subscription
    // The feed may have missed messages: it went down (live() is false
    // already), or it is coming up again (live() turns true right after).
    std::function<void()> on_down, on_up;
  };
  FeedKeeper(std::shared_ptr<Executor> exec, std::string channel, std::chrono::nanoseconds feed_lag);
  // Stops the thread and drops the subscription: no handler runs after.
  ~FeedKeeper();
  FeedKeeper(const FeedKeeper&) = delete;
  FeedKeeper& operator=(const FeedKeeper&) = delete;

  // Subscribes now (a feed is live from its first use when Redis is up),
  // then keeps the subscription. Once.
  void start(Handlers handlers);
  bool live(std::chrono::steady_clock::time_point now) const noexcept {
    return live_.load(std::memory_order_acquire) &&
           now.time_since_epoch().count() - drained_->load(std::memory_order_acquire) <= feed_lag_.count();
  }

 private:
  void subscribe_now();
  void went_down();
  void came_up();
  void keep();

  std::shared_ptr<Executor> exec_;
  std::string channel_;
  std::chrono::nanoseconds feed_lag_;  // how far behind the reader may be (the options' feed_lag)
  Handlers handlers_;  // set by start() before any feed calls them
  std::atomic<bool> live_{false};
  std::shared_ptr<std::atomic<std::int64_t>> drained_ = std::make_shared<std::atomic<std::int64_t>>(0);
  std::atomic<std::uint64_t> feed_id_{0};
  detail::Mutex mutex_;
  std::condition_variable cv_;
  bool stop_ WEAVE_GUARDED_BY(mutex_) = false;
  std::unique_ptr<Subscriber::Interest> interest_ WEAVE_GUARDED_BY(mutex_);
  detail::OwnedThread keeper_;
};

}  // namespace weave::store
