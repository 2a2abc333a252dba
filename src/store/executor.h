// How every feature reaches Redis: a feature builds script calls (or one
// plain command), an Executor runs them and hands back replies, read through
// store::ReplyView (reply.h). One node (redis://, and each master of
// redlock://) is a NodeExecutor: a connection pool, the script SHA cache and
// one Pub/Sub subscriber; ClusterExecutor routes the same calls by hash slot,
// SentinelExecutor to the master the sentinels name. See docs/redis.md and
// docs/scale-out.md.
#pragma once

#include <charconv>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/change_waiter.h"
#include "store/blocking_pop.h"
#include "store/connection.h"
#include "store/subscriber.h"

namespace WEAVE_NAMESPACE::store {

// A number as a script argument (an integer, or a double such as a jitter
// fraction), its text kept in place: no allocation per argument.
//   const store::NumberArg ms(lease.count());   // ... args = {ms.view()}
struct NumberArg {
  template <class N>
  explicit NumberArg(N n) : end(std::to_chars(text, text + sizeof text, n).ptr) {}
  std::string_view view() const { return {text, static_cast<std::size_t>(end - text)}; }
  char text[32];
  char* end;
};

// One script call: EVALSHA <sha> <numkeys> keys... args... (or EVAL <body> ...).
// `body` is a script of a feature's scripts folder (its address identifies it).
// Every key of one call must hash to the same cluster slot.
struct ScriptCall {
  const char* body = nullptr;
  std::vector<std::string_view> keys, args;
  // 0: every key is needed. n > 0: the keys after the first n hold state the
  // script can do without (it reads a missing KEYS[i] as empty). While the
  // slot migrates and only some of the call's keys have moved (TRYAGAIN),
  // the call is sent again at once with the first n keys, instead of
  // waiting for the whole slot to move.
  std::size_t required_keys = 0;
  Command build(std::string_view head, std::string_view sha_or_body, const std::string& numkeys) const;
};

bool is_noscript(const redisReply* r);
[[noreturn]] void bad_reply(const redisReply* r, const char* what);

class NodeExecutor;

class Executor {
 public:
  virtual ~Executor() = default;
  // Runs the calls (pipelined) and returns one reply per call, in order.
  // Error replies throw ReplyError; I/O failures throw IoError
  // (TimeoutError, BackendUnavailable).
  virtual std::vector<Reply> run(const std::vector<ScriptCall>& calls, const char* what) = 0;
  // Calls whose keys have different shards (cluster slots) must not share a
  // script call. 0 for a single node.
  virtual unsigned shard_of(std::string_view /*key*/) const { return 0; }
  // A confirmed subscription to `channel` (see Subscriber), on the node that
  // publishes it (cluster: the channel's slot, with sharded Pub/Sub).
  virtual std::unique_ptr<Subscriber::Interest> subscribe(const std::string& channel,
                                                          std::shared_ptr<Bell> bell = nullptr,
                                                          std::shared_ptr<Feed> feed = nullptr) = 0;
  // PUBLISH (cluster: SPUBLISH on the channel's slot) outside any script;
  // returns how many subscribers received it.
  virtual long long publish(std::string_view channel, std::string_view message) = 0;
  // A broadcast channel: classic Pub/Sub, where a PUBLISH on any node (a
  // script's included, whatever its keys' slot) reaches every subscriber of
  // the deployment. Not sharded on a cluster (each message crosses the
  // cluster bus to every node); elsewhere the same as subscribe / publish.
  // A script publishes on one with 'PUBLISH' when its body carries the line
  // "--@publishes_broadcast" (NodeExecutor).
  virtual std::unique_ptr<Subscriber::Interest> subscribe_broadcast(const std::string& channel,
                                                                    std::shared_ptr<Bell> bell = nullptr,
                                                                    std::shared_ptr<Feed> feed = nullptr) {
    return subscribe(channel, std::move(bell), std::move(feed));
  }
  virtual long long publish_broadcast(std::string_view channel, std::string_view message) {
    return publish(channel, message);
  }
  // One plain command on the node that serves `key` (GET, SET, ...): for a
  // read no script is worth its cost. An error reply throws ReplyError.
  virtual Reply command(const Command& c, std::string_view key, const char* what) = 0;
  // f on every master (one for redis:// and sentinel, each cluster master):
  // for the rare whole-keyspace step (SCAN).
  virtual void for_each_master(const std::function<void(NodeExecutor&)>& f) = 0;

  // Where `calls` go now, for a caller that sends them itself without
  // blocking its thread (store/asio/async_run.h), and how much of run() that
  // caller may leave out. No node: only run() sends them (redlock has no
  // Executor; sentinel re-asks for the master).
  struct Direct {
    NodeExecutor* node = nullptr;
    // run() follows redirects (MOVED, ASK, TRYAGAIN) and sends again after a
    // connection error (cluster): a direct send that meets either leaves the
    // calls to run(), as run() itself would send them again.
    bool resends = false;
    // Keeps `node` while the caller uses it, when the executor may drop it
    // (a cluster node that left the slot map); else the executor keeps it.
    std::shared_ptr<NodeExecutor> keep{};
  };
  virtual Direct direct(const std::vector<ScriptCall>& /*calls*/) { return {}; }

  // Blocking pops of the list `key` on a connection of its own to the node
  // that serves it (store/blocking_pop.h), or null when that node has no
  // waiting connection free (kWaitingConnections) or this executor has none.
  // Throws BackendUnavailable when it cannot connect.
  virtual std::unique_ptr<BlockingPop> blocking_pop(const std::string& /*key*/) { return nullptr; }
};

// How many threads of a process may wait on a connection of their own to
// one Redis node at once (Executor::blocking_pop); more wait on its
// subscriber.
inline constexpr int kWaitingConnections = 16;

// exec.run() of one call: its reply.
Reply run_one(Executor& exec, ScriptCall call, const char* what);

// Every key matching the glob `pattern` on every master of `exec`, handed
// to `batch` a SCAN page at a time (a key may come twice while a cluster
// reshards): the one whole-keyspace walk (a cache's evict-all, the lock
// listing). A key's later calls go through `exec`, which follows redirects.
void scan_keys(Executor& exec, std::string_view pattern,
                         const std::function<void(const std::vector<std::string>& keys)>& batch, const char* what);

// One Redis node: pool, SHA cache, subscriber. `sharded` publishes with
// SPUBLISH and waits with SSUBSCRIBE (Redis Cluster): every script body is
// loaded with its 'PUBLISH' calls turned into 'SPUBLISH', except a body
// with the line "--@publishes_broadcast" (its channel is a broadcast one).
class NodeExecutor final : public Executor {
 public:
  NodeExecutor(Endpoint endpoint, int pool_size, bool sharded = false);

  std::vector<Reply> run(const std::vector<ScriptCall>& calls, const char* what) override;
  std::unique_ptr<Subscriber::Interest> subscribe(const std::string& channel, std::shared_ptr<Bell> bell = nullptr,
                                                  std::shared_ptr<Feed> feed = nullptr) override;
  long long publish(std::string_view channel, std::string_view message) override;
  std::unique_ptr<Subscriber::Interest> subscribe_broadcast(const std::string& channel,
                                                            std::shared_ptr<Bell> bell = nullptr,
                                                            std::shared_ptr<Feed> feed = nullptr) override;
  long long publish_broadcast(std::string_view channel, std::string_view message) override;
  Reply command(const Command& c, std::string_view key, const char* what) override;
  void for_each_master(const std::function<void(NodeExecutor&)>& f) override { f(*this); }

  // The replies as the server sent them (error replies included, NOSCRIPT
  // already handled). With `asking`, each call is preceded by ASKING (a
  // cluster ASK redirect). Throws only on I/O failures.
  std::vector<Reply> run_raw(const std::vector<ScriptCall>& calls, bool asking = false);
  // One plain command on a pooled connection (CLUSTER SLOTS and the like),
  // its reply as the server sent it. With `asking`, preceded by ASKING in the
  // same round trip (a cluster ASK redirect).
  Reply command(const Command& c, bool asking = false);
  const Endpoint& endpoint() const { return pool_->endpoint(); }
  const std::shared_ptr<Subscriber>& subscriber() const { return sub_; }
  Direct direct(const std::vector<ScriptCall>&) override { return {this, false}; }
  std::unique_ptr<BlockingPop> blocking_pop(const std::string& key) override;

  // run_raw in steps, for run_on_each: open() borrows a connection, start()
  // writes the calls without reading; the caller may feed replies in
  // (Connection::read_available) as they arrive; finish() reads the rest,
  // handles NOSCRIPT and returns the replies.
  class InFlight {
   public:
    bool complete() const { return replies.size() >= expected_; }
    Connection& connection() { return *conn_; }
    std::vector<Reply> replies;  // of the calls written last

   private:
    friend class NodeExecutor;
    explicit InFlight(Pool::Borrowed c) : borrowed_(std::move(c)), conn_(&**borrowed_) {}
    explicit InFlight(Connection& c) : conn_(&c) {}
    std::optional<Pool::Borrowed> borrowed_;  // (none: the caller's own connection)
    Connection* conn_;
    std::vector<std::string> shas_, numkeys_;
    std::size_t expected_ = 0;
    bool asking_ = false;
    std::vector<Reply> first_;           // take_replies: while NOSCRIPT calls go again
    std::vector<std::size_t> noscript_;  // ... these
    std::vector<const char*> loading_;   // queue_on: scripts loaded ahead of the calls
  };
  InFlight open();
  void start(InFlight& flight, const std::vector<ScriptCall>& calls, bool asking = false);
  std::vector<Reply> finish(InFlight& flight, const std::vector<ScriptCall>& calls);
  // run_raw that never blocks, for store/asio/direct_links.h, on a connection
  // the caller owns and watches: queue_on() queues the calls on `conn`
  // without writing them (a script not loaded yet: SCRIPT LOAD and EVAL in
  // the same round trip). The caller writes them (Connection::write_some),
  // feeds the connection what it reads until the flight is complete, then
  // take_replies(): the replies, or nullopt when the server had lost scripts
  // and those calls were queued again as EVAL (write, read, take again).
  InFlight queue_on(Connection& conn, const std::vector<ScriptCall>& calls);
  std::optional<std::vector<Reply>> take_replies(InFlight& flight, const std::vector<ScriptCall>& calls);
  // The connection pool, for store/asio/direct_links.h: it takes idle
  // connections out (Pool::try_take) and hands them back (Pool::adopt),
  // keeping only weak references: one tells this executor from a later one
  // at the same address and expires with it.
  const std::shared_ptr<Pool>& pool() const noexcept { return pool_; }
  int pool_size() const noexcept { return pool_->size(); }
  // After a failed flight: drops the idle connections (they may be stale too)
  // and says whether running the calls once more on a new connection is
  // right (the reused connection had died while idle).
  bool retry_after(InFlight& flight);

 private:
  // Writes every call: queue_all(), then flush.
  void send_all(InFlight& f, const std::vector<ScriptCall>& calls);
  void queue_all(InFlight& f, const std::vector<ScriptCall>& calls);
  // Writes `which` of the calls (EVALSHA, or EVAL when `eval` or the call's
  // SHA is ""): queue(), then flush.
  void send(InFlight& f, const std::vector<ScriptCall>& calls, const std::vector<std::size_t>& which, bool eval);
  void queue(InFlight& f, const std::vector<ScriptCall>& calls, const std::vector<std::size_t>& which, bool eval);
  std::vector<Reply> receive(InFlight& f);
  const std::string& body_of(const char* body);
  // PUBLISH or SPUBLISH outside any script: the number of receivers.
  long long publish_with(const char* publish_command, std::string_view channel, std::string_view message);
  std::vector<std::string> shas_for(Connection& conn, const std::vector<ScriptCall>& calls);
  // The calls' SHAs from the cache alone ("" for one not there); false when
  // one is not there.
  bool cached_shas(const std::vector<ScriptCall>& calls, std::vector<std::string>& out);
  // The distinct scripts of the calls whose SHA is "" in `shas`.
  static std::vector<const char*> unloaded(const std::vector<ScriptCall>& calls, const std::vector<std::string>& shas);

  std::shared_ptr<Pool> pool_;  // (shared: store/asio/direct_links.h hands connections back to it)
  std::shared_ptr<Subscriber> sub_;
  std::shared_ptr<Pool> waits_;  // blocking_pop(): connections apart from pool_, which they never hold up
  bool sharded_;
  std::once_flag broadcast_once_;
  std::shared_ptr<Subscriber> broadcast_sub_;  // sharded_: classic SUBSCRIBE, made at first use
  // Entries are never erased: a sent body stays where body_of() found it.
  detail::SharedMutex sha_mutex_;
  // body -> (sent body, sha)
  std::map<const char*, std::pair<std::string, std::string>> scripts_ WEAVE_GUARDED_BY(sha_mutex_);
};

// The same calls on several nodes at once from the calling thread: every
// node's calls are written before any reply is read, then replies are read as
// they arrive (poll), so the whole takes about the slowest node's round trip
// with no thread hand-off. One outcome per node: its replies (error replies
// included, NOSCRIPT handled), or the error it failed with (an I/O error, a
// TimeoutError after that node's command timeout).
struct NodeOutcome {
  std::vector<Reply> replies;
  std::exception_ptr error;
};
std::vector<NodeOutcome> run_on_each(std::span<NodeExecutor* const> nodes, const std::vector<ScriptCall>& calls);


// A feature's waiter (an interface with one virtual
// `bool wait_until(std::chrono::steady_clock::time_point)`: dedupe's
// ClaimWaiter, the queue's QueueWaiter) over a confirmed subscription to
// `channel`; keeps the executor whose subscriber serves it.
template <class Waiter>
class SubscriptionWaiter : public Waiter {
 public:
  SubscriptionWaiter(std::shared_ptr<Executor> exec, const std::string& channel)
      : exec_(std::move(exec)), interest_(exec_->subscribe(channel)) {}
  bool wait_until(std::chrono::steady_clock::time_point deadline) override { return interest_->wait_until(deadline); }

 protected:
  // For a waiter that also wakes coroutines (Interest::on_change).
  Subscriber::Interest& interest() noexcept { return *interest_; }

 private:
  std::shared_ptr<Executor> exec_;  // declared first: outlives interest_
  std::unique_ptr<Subscriber::Interest> interest_;
};

// A key's change waiter (a dedupe record's channel, a semaphore's): waits
// blocking, or wakes a coroutine (ChangeWaiter::wake_on_change).
class ChangeSubscription final : public SubscriptionWaiter<detail::ChangeWaiter> {
 public:
  using SubscriptionWaiter::SubscriptionWaiter;
  bool wake_on_change(std::function<void()> wake) override {
    interest().on_change(std::move(wake));
    return true;
  }
};

}  // namespace weave::store
