// The store's wire: one hiredis connection, a small pool, and binary-safe
// argv commands. Features never use it directly: they go through
// executor.h and read replies through reply.h. hiredis' structs are only
// declared here: their fields are readable in src/store/*.cpp alone, the
// one place that includes hiredis' header (lint.store_protocol).
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.h"

struct redisReply;
struct redisContext;

namespace WEAVE_NAMESPACE::store {

struct Endpoint {
  std::string host;
  int port = 6379;
  std::string user, password;  // AUTH when password is set (user optional: Redis 6 ACL)
  int db = 0;                  // SELECT when not 0
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{1000};
  std::string describe() const { return host + ":" + std::to_string(port); }
};

// A server's answer, owned; opaque outside src/store/*.cpp (redisReply is
// incomplete there): read it through store::ReplyView (reply.h).
struct ReplyDeleter {
  void operator()(redisReply* r) const noexcept;  // freeReplyObject (connection.cpp)
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// One command as binary-safe argv (never a format string). The views must
// outlive the call that sends it.
class Command {
 public:
  Command() = default;
  Command(std::initializer_list<std::string_view> args) {
    for (auto a : args) add(a);
  }
  Command& add(std::string_view a) {
    argv_.push_back(a.data());
    lens_.push_back(a.size());
    return *this;
  }
  int argc() const { return static_cast<int>(argv_.size()); }
  const char** argv() const { return const_cast<const char**>(argv_.data()); }
  const size_t* lens() const { return lens_.data(); }
  void reserve(std::size_t n) {
    argv_.reserve(n);
    lens_.reserve(n);
  }

 private:
  std::vector<const char*> argv_;
  std::vector<size_t> lens_;
};

// How an I/O failure looked: a timeout, or the peer being gone / the socket
// failing (a reused idle connection may have died while idle).
enum class IoFailure { none, timeout, closed };

// One blocking hiredis connection with connect / command timeouts and the
// AUTH / SELECT handshake. Not thread-safe: the pool hands it to one user.
class Connection {
 public:
  // Connects and runs the handshake within endpoint.connect_timeout.
  // Throws BackendUnavailable.
  explicit Connection(const Endpoint& endpoint);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends the commands in one write (pipelined) and reads one reply each.
  // Throws TimeoutError / IoError (and marks the connection broken); error
  // replies are returned, not thrown.
  std::vector<Reply> pipeline(const std::vector<Command>& commands);
  Reply command(const Command& c);

  // The same in steps, for waiting on several connections at once
  // (store::run_on_each): queue commands, write them, then, each time poll()
  // says fd() is readable, move the replies that arrived into `out`.
  void append(const Command& c);
  void flush();
  int fd() const noexcept;
  void read_available(std::vector<Reply>& out);
  // The same for a caller that waits on fd() in its own event loop
  // (store/asio/direct_links.h): write_some() writes what append() queued
  // without blocking (and never raises SIGPIPE): true when all is written,
  // false when the socket is full (wait until it is writable, call again).
  // feed() takes bytes the caller read from fd(); `n` 0: the server closed it.
  bool write_some();
  void feed(const char* data, std::size_t n, std::vector<Reply>& out);
  // Blocks (up to the command timeout) for the next reply.
  Reply read_reply();
  // The caller stopped waiting for replies: the connection is unusable.
  [[noreturn]] void timed_out(const char* what);
  // The caller's own read or write failed (`why`) or met the end: the
  // connection is unusable (IoFailure::closed); throws IoError.
  [[noreturn]] void lost(const std::string& why);
  // The caller stops with replies unread (its coroutine was destroyed): the
  // connection is unusable, so that no later caller reads them.
  void abandon() noexcept {
    broken_ = true;
    failure_ = IoFailure::closed;
  }

  bool broken() const noexcept { return broken_; }
  IoFailure last_failure() const noexcept { return failure_; }
  redisContext* raw() noexcept { return ctx_; }

 private:
  [[noreturn]] void fail(const char* what);
  // Writes what append() queued; `wait`: blocking (up to the socket's send
  // timeout), else returns false when the socket is full.
  bool send_queued(bool wait);
  // Moves the replies the reader has parsed into `out`.
  void take_parsed(std::vector<Reply>& out, const char* what);
  redisContext* ctx_ = nullptr;
  std::string where_;
  bool broken_ = false;
  IoFailure failure_ = IoFailure::none;
};

// Runs the AUTH / SELECT handshake on a fresh context (shared with the
// subscriber). Throws BackendUnavailable, or ReplyError when the server
// refuses AUTH / SELECT (WRONGPASS, NOPERM...).
void handshake(redisContext* ctx, const Endpoint& endpoint);
// Writes what redisAppendCommand*() queued on `c` with send(MSG_NOSIGNAL),
// never hiredis' write(): on a connection the server closed, a write after
// the first raises SIGPIPE, whose default action ends the process. `wait`:
// blocking, up to the socket's send timeout. 1: all written; 0: the socket
// is full (only without `wait`); -1: failed, c->err / c->errstr set as
// hiredis sets them and errno kept (EAGAIN: the send timeout passed).
int send_output(redisContext* c, bool wait);
// Opens a context with the endpoint's connect timeout; throws BackendUnavailable.
redisContext* connect_raw(const Endpoint& endpoint);

// At most `size` connections, opened lazily; a broken one is dropped and a
// new one opened by a later borrow.
class Pool {
 public:
  Pool(Endpoint endpoint, int size);
  ~Pool();

  class Borrowed {
   public:
    Borrowed(Pool* pool, std::unique_ptr<Connection> c, bool fresh)
        : pool_(pool), conn_(std::move(c)), fresh_(fresh) {}
    Borrowed(Borrowed&&) noexcept = default;
    Borrowed& operator=(Borrowed&&) = delete;
    ~Borrowed() {
      if (conn_) pool_->give_back(std::move(conn_));
    }
    Connection* operator->() { return conn_.get(); }
    Connection& operator*() { return *conn_; }
    // True when just opened (not reused from the idle list).
    bool fresh() const { return fresh_; }
    // Closes the connection on purpose (replies its user will not read are
    // still due): gone from the pool, not counted as a failure.
    void close() {
      if (conn_) pool_->forget(std::move(conn_));
    }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
    bool fresh_;
  };

  // An idle connection, a new one, or waits (up to the command timeout) for
  // one to come back. Throws BackendUnavailable / TimeoutError.
  Borrowed borrow();
  // The same without waiting: nothing when all `size` are borrowed.
  std::optional<Borrowed> try_borrow();
  // An idle connection taken out of the pool for good (the pool may open
  // another in its place), or nothing: never connects and never waits.
  std::unique_ptr<Connection> try_take();
  // A connection try_take() gave out, handed back usable (blocking, nothing
  // pending): idle again, or closed when the pool is full meanwhile.
  void adopt(std::unique_ptr<Connection> c);
  int size() const noexcept { return size_; }
  // Closes all idle connections (after a failure: they may be stale too).
  void drop_idle();
  const Endpoint& endpoint() const { return endpoint_; }

 private:
  void give_back(std::unique_ptr<Connection> c);
  void forget(std::unique_ptr<Connection> c);
  Borrowed take_idle() WEAVE_REQUIRES(mutex_);
  // Connects the one more already counted in open_ (uncounted on failure);
  // called without the lock.
  Borrowed open_counted();
  Endpoint endpoint_;
  int size_;
  detail::Mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_ WEAVE_GUARDED_BY(mutex_);
  int open_ WEAVE_GUARDED_BY(mutex_) = 0;  // idle + borrowed
  // Why the last connection failed ("" while none did since one last
  // worked): the next one that connects is a `reconnected` event.
  std::string failed_ WEAVE_GUARDED_BY(mutex_);
};

}  // namespace weave::store
