// store/feed_keeper.h: a broadcast channel's subscription and its liveness
// (a cache's local tier serves only while its invalidation feed is live).
#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "store/feed_keeper.h"

namespace WEAVE_NAMESPACE::store {

using std::chrono::milliseconds;

FeedKeeper::FeedKeeper(std::shared_ptr<store::Executor> exec, std::string channel, std::chrono::nanoseconds feed_lag)
    : exec_(std::move(exec)), channel_(std::move(channel)), feed_lag_(feed_lag) {}

FeedKeeper::~FeedKeeper() {
  {
    detail::Guard g(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  keeper_.join();
  detail::Guard g(mutex_);
  interest_.reset();  // the subscriber calls no handler once it is gone
}

void FeedKeeper::start(Handlers handlers) {
  {
    detail::Guard g(mutex_);
    handlers_ = std::move(handlers);
  }
  // The first subscription is made here, so a cache is live from its first
  // call when Redis is up; the keeper takes over from then on.
  try {
    subscribe_now();
  } catch (const std::exception&) {
    // Redis is down: not live; the keeper retries.
  }
  keeper_ = detail::OwnedThread("weave-feed", [this] { keep(); });
}

// A fresh subscription with a feed of its own: only the current feed's
// events count (an older one may still hear from a node that stopped
// publishing, e.g. the master before a failover).
void FeedKeeper::subscribe_now() {
  auto feed = std::make_shared<store::Feed>();
  feed->drained_at = drained_;
  // A confirmation every half feed_lag keeps live() true on a quiet
  // connection with room for a late reply.
  feed->confirm_every = std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(feed_lag_) / 2);
  const std::uint64_t id = ++feed_id_;
  feed->on_message = [this, id](std::string_view payload) {
    if (id != feed_id_.load()) return;
    handlers_.on_message(payload);
  };
  feed->on_state = [this, id](bool up) {
    if (id != feed_id_.load()) return;
    if (up) came_up();
    else went_down();
  };
  auto interest = exec_->subscribe_broadcast(channel_, nullptr, feed);
  {
    detail::Guard g(mutex_);
    interest_ = std::move(interest);
  }
  came_up();
}

void FeedKeeper::went_down() {
  live_.store(false, std::memory_order_release);
  handlers_.on_down();
  cv_.notify_all();
}

// Before going live, the handler drops what may have missed an invalidation
// while the feed was down.
void FeedKeeper::came_up() {
  handlers_.on_up();
  live_.store(true, std::memory_order_release);
}

void FeedKeeper::keep() {
  int backoff_ms = 50;
  for (;;) {
    {
      detail::Guard g(mutex_);
      mutex_.wait(cv_, [&]() WEAVE_REQUIRES(mutex_) { return stop_ || !live_.load(); });
      if (stop_) return;
      mutex_.wait_for(cv_, milliseconds(backoff_ms), [&]() WEAVE_REQUIRES(mutex_) { return stop_; });
      if (stop_) return;
    }
    if (live_.load()) continue;  // the subscriber reconnected by itself
    try {
      subscribe_now();
      backoff_ms = 50;
    } catch (const std::exception&) {
      backoff_ms = std::min(backoff_ms * 2, 1000);
    }
  }
}

}  // namespace weave::store
