// One Pub/Sub connection per redis backend, shared by all waiters: a reader
// thread, per-channel refcounted SUBSCRIBE, and a generation counter per
// channel that waiters block on (no polling).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "redis/connection.h"

namespace weave::redis {

class Subscriber {
 public:
  explicit Subscriber(Endpoint endpoint);
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  struct Channel;
  // A confirmed subscription to one channel; unsubscribes (when the last
  // interest goes) on destruction.
  class Interest {
   public:
    Interest(Subscriber* s, std::shared_ptr<Channel> ch, std::uint64_t seen)
        : sub_(s), ch_(std::move(ch)), seen_(seen) {}
    ~Interest();
    Interest(const Interest&) = delete;
    Interest& operator=(const Interest&) = delete;
    // True once a message (or a resubscription after a reconnect, which may
    // have missed one) arrived since the last true; false at the deadline.
    bool wait_until(std::chrono::steady_clock::time_point deadline);

   private:
    Subscriber* sub_;
    std::shared_ptr<Channel> ch_;
    std::uint64_t seen_;
  };

  // Subscribes to `channel` (refcounted) and returns once Redis confirmed
  // the subscription, so any PUBLISH after this returns is seen. Throws
  // BackendUnavailable / TimeoutError.
  std::unique_ptr<Interest> subscribe(const std::string& channel);

  // Counters for tests and benches.
  std::uint64_t subscribe_commands() const noexcept { return subscribes_sent_.load(); }
  std::uint64_t reconnects() const noexcept { return reconnects_.load(); }

 private:
  void release_interest(const std::shared_ptr<Channel>& ch);
  void start_locked();
  void run();
  bool connect_once();
  void on_reply(redisReply* r);
  void enqueue_locked(bool subscribe, const std::string& channel);
  void wake_pipe();
  void disconnect_locked(const std::string& why);

  Endpoint endpoint_;
  std::mutex mutex_;
  std::condition_variable state_cv_;  // connection state / confirmations
  std::unordered_map<std::string, std::shared_ptr<Channel>> channels_;
  std::deque<std::pair<bool, std::string>> outgoing_;  // (subscribe?, channel)
  redisContext* ctx_ = nullptr;                        // owned by the reader thread
  bool connected_ = false;
  bool ever_connected_ = false;
  std::uint64_t connect_failures_ = 0;
  std::string last_error_;
  bool stop_ = false;
  bool started_ = false;
  int pipe_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<std::uint64_t> subscribes_sent_{0};
  std::atomic<std::uint64_t> reconnects_{0};
};

}  // namespace weave::redis
