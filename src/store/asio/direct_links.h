// The connections a coroutine's round trips use (store/asio/async_run.h): per
// execution context and per node, up to the node's pool_size connections
// registered once with that context's reactor and kept there, so that a
// round trip costs a write, a read and the reactor's wake-up: no
// registration, no mode switch and no timer of its own. A link is made of
// one of the node's idle pooled connections (never connected on the io
// thread); the context's shutdown hands them back to the pool.
//
//   DirectLinks::Use use = DirectLinks::of(ex).take(node, ex);
//   if (!use) ...                       // none idle: leave the calls to run()
//   NodeExecutor::InFlight flight = node.queue_on(use->connection(), calls);
//   use->start_round_trip();            // the node's command timeout from now
//   ... write_some / async_read_some / feed ...
//   use.finished();                     // else the link is closed, not reused
//
// Timeouts: one sweep timer per context runs while a round trip is under
// way; a round trip past its deadline has its socket shut down (its read
// ends at once), found within a twentieth of the timeout (at most 20 ms).
#pragma once

#include <atomic>
#include "weave/asio.h"
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

// One connection of a node, non-blocking, registered with one context's
// reactor; one round trip at a time.
class DirectLink {
 public:
  DirectLink(const net::any_io_executor& ex, std::unique_ptr<Connection> conn, std::weak_ptr<Pool> home,
             std::chrono::milliseconds timeout);
  ~DirectLink();
  DirectLink(const DirectLink&) = delete;
  DirectLink& operator=(const DirectLink&) = delete;

  Connection& connection() noexcept { return *conn_; }
  net::posix::stream_descriptor& socket() noexcept { return socket_; }
  // A round trip begins: its deadline is the command timeout from now.
  void start_round_trip() noexcept;
  // The sweep found the round trip past its deadline and shut the socket down.
  bool timed_out() const noexcept { return deadline_.load(std::memory_order_acquire) == kTimedOut; }

 private:
  friend class DirectLinks;
  static constexpr std::int64_t kTimedOut = -1;
  // The sweep: past its deadline at `now`, the socket is shut down.
  void expire_if_late(std::int64_t now) noexcept;
  // The connection back to its node's pool, blocking again (the context
  // ends, the node lives on); else the destructor closes it.
  void hand_back() noexcept;

  std::unique_ptr<Connection> conn_;
  net::posix::stream_descriptor socket_;
  const int fd_;
  const std::weak_ptr<Pool> home_;  // the node's pool (NodeExecutor::pool()), which it came from
  const std::chrono::milliseconds timeout_;
  std::atomic<std::int64_t> deadline_{0};  // steady_clock ticks; kTimedOut once the sweep shut it down
};

class DirectLinks final : public net::execution_context::service {
 public:
  static net::execution_context::id id;
  explicit DirectLinks(net::execution_context& context);
  ~DirectLinks() override;

  // The links of the context `ex` runs on.
  static DirectLinks& of(const net::any_io_executor& ex);

  // A link in use; given back when destroyed: kept for the next round trip
  // once finished(), closed otherwise (a reply may still be on its way).
  class Use {
   public:
    Use() = default;
    Use(Use&& other) noexcept
        : links_(other.links_), node_(other.node_), link_(std::move(other.link_)), finished_(other.finished_) {}
    Use& operator=(Use&&) = delete;
    ~Use() {
      if (link_) links_->give_back(node_, std::move(link_), finished_);
    }
    explicit operator bool() const noexcept { return link_ != nullptr; }
    DirectLink& operator*() noexcept { return *link_; }
    DirectLink* operator->() noexcept { return link_.get(); }
    void finished() noexcept { finished_ = true; }

   private:
    friend class DirectLinks;
    Use(DirectLinks* links, const void* node, std::unique_ptr<DirectLink> link)
        : links_(links), node_(node), link_(std::move(link)) {}
    DirectLinks* links_ = nullptr;
    const void* node_ = nullptr;
    std::unique_ptr<DirectLink> link_;
    bool finished_ = false;
  };

  // An idle link to `node`, or a new one made of the node's idle pooled
  // connection; empty when neither is at hand (or pool_size links to the
  // node are in use here). Never connects, never waits.
  Use take(NodeExecutor& node, const net::any_io_executor& ex);
  // Closes the idle links to `node` (one died while idle: so may they).
  void drop_idle(NodeExecutor& node);

 private:
  void shutdown() override;
  void give_back(const void* node, std::unique_ptr<DirectLink> link, bool usable);
  void arm_sweep(const net::any_io_executor& ex) WEAVE_REQUIRES(mutex_);
  void sweep();

  struct Node {
    std::weak_ptr<Pool> pool;  // (expired: the executor is gone)
    std::vector<std::unique_ptr<DirectLink>> idle;
    int open = 0;  // idle + in use
  };
  detail::Mutex mutex_;
  // By NodeExecutor address, checked by its pool.
  std::unordered_map<const void*, Node> nodes_ WEAVE_GUARDED_BY(mutex_);
  std::vector<DirectLink*> busy_ WEAVE_GUARDED_BY(mutex_);
  std::optional<net::steady_timer> sweep_ WEAVE_GUARDED_BY(mutex_);
  bool sweeping_ WEAVE_GUARDED_BY(mutex_) = false;
  bool shut_ WEAVE_GUARDED_BY(mutex_) = false;
};

}  // namespace weave::store
