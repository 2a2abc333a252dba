// One Pub/Sub connection per redis backend, shared by all waiters: a reader
// thread, per-channel refcounted SUBSCRIBE, and a generation counter per
// channel that waiters block on (no polling).
#pragma once

#include "weave/abi.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <string_view>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/process.h"
#include "store/connection.h"

namespace WEAVE_NAMESPACE::store {

// Rung whenever a subscribed channel's generation moves (message, lost
// connection, resubscription, moved slot): lets one waiter wait for several
// subscriptions at once (redlock: one per master).
struct Bell {
  detail::Mutex mutex;
  std::condition_variable cv;
  std::uint64_t rings WEAVE_GUARDED_BY(mutex) = 0;
  // Optional: called after each ring, on the ringing thread, outside `mutex`
  // (set before the bell is handed to a subscription).
  std::function<void()> hook;
  void ring() {
    {
      detail::Guard g(mutex);
      ++rings;
    }
    cv.notify_all();
    if (hook) hook();
  }
};

// For subscriptions that carry data (cache invalidations): each message's
// payload, and whether the subscription can have missed one. Called on the
// subscriber's reader thread under its lock: quick, and never calling back
// into the subscriber.
struct Feed {
  std::function<void(std::string_view payload)> on_message;
  // false: the connection dropped, or the node stopped being the one that
  // publishes (wake_all): messages may be lost until true again, which comes
  // once the subscription is confirmed on a new connection.
  std::function<void(bool live)> on_state;
  // If set: the reader thread stores here (steady_clock ns) a moment T such
  // that every message the server published before T has been handed to
  // on_message. T moves by a PING sent every `confirm_every` on the
  // subscription's connection: its reply comes after every message published
  // before the server read the PING, so the PING's send time is such a T. (A
  // socket found empty proves nothing: the server may hold a message it has
  // already acknowledged to its publisher.) A reader that stood still (the
  // process was paused, or starved) shows as stale.
  std::shared_ptr<std::atomic<std::int64_t>> drained_at;
  std::chrono::milliseconds confirm_every{5};
};

class Subscriber : public std::enable_shared_from_this<Subscriber> {
 public:
  // `sharded`: SSUBSCRIBE / SUNSUBSCRIBE (Redis 7 sharded Pub/Sub, cluster).
  explicit Subscriber(Endpoint endpoint, bool sharded = false);
  ~Subscriber();
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  struct Channel;
  // A subscription to one channel (confirmed, or pending: subscribe()); unsubscribes (when the last
  // interest goes) on destruction.
  class Interest {
   public:
    Interest(Subscriber* s, std::shared_ptr<Channel> ch, std::uint64_t seen, std::shared_ptr<Bell> bell = nullptr,
             std::shared_ptr<Feed> feed = nullptr);
    ~Interest();
    Interest(const Interest&) = delete;
    Interest& operator=(const Interest&) = delete;
    // True once a message (or a resubscription after a reconnect, which may
    // have missed one) arrived since the last true; false at the deadline.
    // `message`, if given, receives the message's text when exactly one
    // message and nothing else arrived since, else "" (anything may have).
    bool wait_until(std::chrono::steady_clock::time_point deadline, std::string* message = nullptr);
    // Runs `wake` once at the next change (at once, here, if one came since
    // the last wait_until() that returned true), on the reader thread under
    // the subscriber's lock: quick, never calling back into the subscriber.
    // Replaces an earlier one; the Interest's destruction drops it.
    void on_change(std::function<void()> wake);

   private:
    Subscriber* sub_;
    // The subscriber, when it is owned by a shared_ptr (a node's): an
    // Interest keeps it, so a node the executor dropped (it left the
    // cluster) still serves its last subscriptions until they go.
    std::shared_ptr<Subscriber> keep_;
    std::shared_ptr<Channel> ch_;
    std::uint64_t seen_;
    std::shared_ptr<Bell> bell_;
    std::shared_ptr<Feed> feed_;
  };

  // Subscribes to `channel` (refcounted) and returns once Redis confirmed
  // the subscription, so any PUBLISH after this returns is seen. Throws
  // BackendUnavailable / TimeoutError, or ReplyError with the server's error
  // (e.g. "MOVED ..." for a sharded channel whose slot moved). Without a
  // feed, a confirmation still missing after the command timeout on a live
  // connection is not an error: the Interest is returned, and the answer
  // (confirmation or refusal) counts as a change, so a waiter that looks at
  // its state after subscribing and again at each change misses nothing; a
  // later subscribe() of the channel returns at once while it is pending. `bell`, if
  // given, is rung on every change of this subscription until the Interest
  // goes; `feed`, if given, gets every message and state change until then.
  std::unique_ptr<Interest> subscribe(const std::string& channel, std::shared_ptr<Bell> bell = nullptr,
                                      std::shared_ptr<Feed> feed = nullptr);

  // Wakes every Interest as if a message had come (their waiters try again):
  // the node stopped being the one that publishes (a failover).
  void wake_all();

  // Counters for tests and benches.
  std::uint64_t subscribe_commands() const noexcept { return subscribes_sent_.load(); }
  std::uint64_t reconnects() const noexcept { return reconnects_.load(); }

 private:
  void release_interest(const std::shared_ptr<Channel>& ch, Bell* bell, Feed* feed);
  void start_locked() WEAVE_REQUIRES(mutex_);
  void run();
  bool connect_once();
  void on_reply(redisReply* r);
  void enqueue_locked(bool subscribe, const std::string& channel) WEAVE_REQUIRES(mutex_);
  void wake_pipe();
  void disconnect_locked(const std::string& why) WEAVE_REQUIRES(mutex_);
  // A change of `ch`: its waiters (unless the caller tells them after the
  // lock, `notify_waiters` false), bells and wake-ups.
  void bump_locked(Channel& ch, bool notify_waiters = true) WEAVE_REQUIRES(mutex_);
  void mark_drained_locked(std::int64_t at) WEAVE_REQUIRES(mutex_);

  Endpoint endpoint_;
  bool sharded_ = false;
  // Guards what follows, and the fields of every Channel (subscriber.cpp),
  // which the analysis cannot name from there.
  detail::Mutex mutex_;
  std::condition_variable state_cv_;  // connection state / confirmations
  std::unordered_map<std::string, std::shared_ptr<Channel>> channels_ WEAVE_GUARDED_BY(mutex_);
  std::deque<std::pair<bool, std::string>> outgoing_ WEAVE_GUARDED_BY(mutex_);  // (subscribe?, channel)
  // Awaiting confirmation or error, in order.
  std::deque<std::string> sent_subscribes_ WEAVE_GUARDED_BY(mutex_);
  // Owned by the reader thread; set under mutex_ on connecting and
  // disconnecting, so the other threads see whether one is open.
  redisContext* ctx_ = nullptr;
  bool connected_ WEAVE_GUARDED_BY(mutex_) = false;
  bool ever_connected_ WEAVE_GUARDED_BY(mutex_) = false;
  std::uint64_t connect_failures_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::string last_error_ WEAVE_GUARDED_BY(mutex_);
  bool stop_ WEAVE_GUARDED_BY(mutex_) = false;
  bool started_ WEAVE_GUARDED_BY(mutex_) = false;
  int pipe_[2] = {-1, -1};
  detail::OwnedThread thread_;
  std::atomic<std::int64_t> drained_at_{0};  // the latest mark_drained_locked
  // Reader thread only: send times of the PINGs whose replies are due, in
  // order, and when the last one went out.
  std::deque<std::int64_t> pings_due_;
  std::chrono::steady_clock::time_point last_ping_{};
  std::atomic<std::uint64_t> subscribes_sent_{0};
  std::atomic<std::uint64_t> reconnects_{0};
};

}  // namespace weave::store
