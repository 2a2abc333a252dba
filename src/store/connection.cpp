#include "store/connection.h"

#include <fcntl.h>
#include <optional>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <hiredis/hiredis.h>

#include "core/events.h"
#include "store/acl.h"
#include "weave/error.h"

// hiredis' sds.h (included by hiredis.h) declares its functions without
// extern "C": the one send_output() needs, as the library defines it.
namespace hiredis_sds {
extern "C" void sdsrange(char* s, int start, int end);
}

namespace WEAVE_NAMESPACE::store {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  if (ms.count() <= 0) ms = std::chrono::milliseconds(1);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

std::string reply_error(const redisReply* r) {
  return r ? std::string(r->str, r->len) : std::string("no reply");
}

// hiredis allocates an array's element table as the reply declares it
// ("*<n>"), before a single element arrived: a declared size over this is
// refused (the reader fails, the connection is dropped). Weave's largest
// replies are SCAN pages, queue batches and CLUSTER SLOTS, far below it.
constexpr int kMaxReplyElements = 1 << 20;
thread_local std::optional<long long> refused_elements;  // the last refused size, for the error's text
redisReplyObjectFunctions* hiredis_functions = nullptr;  // hiredis's own, shared by every reader

void* bounded_array(const redisReadTask* task, int elements) {
  if (elements < 0 || elements > kMaxReplyElements) {
    refused_elements = elements;
    return nullptr;  // hiredis: an out-of-memory error, the reader unusable
  }
  return hiredis_functions->createArray(task, elements);
}

// The context's error, in words: a refused reply size says what it was.
std::string context_error(const redisContext* c) {
  if (c->err == REDIS_ERR_OOM && refused_elements) {
    const long long n = *refused_elements;
    refused_elements.reset();
    return "a reply declared " + std::to_string(n) + " elements, over the bound of " +
           std::to_string(kMaxReplyElements) + " (the connection is dropped)";
  }
  return c->errstr;
}

void bound_replies(redisContext* c) {
  static redisReplyObjectFunctions bounded = [c] {
    hiredis_functions = c->reader->fn;
    redisReplyObjectFunctions f = *c->reader->fn;
    f.createArray = bounded_array;
    return f;
  }();
  c->reader->fn = &bounded;
}

}  // namespace

redisContext* connect_raw(const Endpoint& ep) {
  redisContext* c = redisConnectWithTimeout(ep.host.c_str(), ep.port, to_timeval(ep.connect_timeout));
  if (c == nullptr) throw BackendUnavailable("weave redis: cannot connect to " + ep.describe() + ": out of memory");
  if (c->err) {
    std::string why = c->errstr;
    redisFree(c);
    throw BackendUnavailable("weave redis: cannot connect to " + ep.describe() + ": " + why);
  }
  // Not inherited by a program the process starts (fork and exec): a child
  // holding the socket would keep the connection open on the server after
  // Weave closed it (a node dropped, a pool closed).
  ::fcntl(c->fd, F_SETFD, FD_CLOEXEC);
  bound_replies(c);
  return c;
}

void handshake(redisContext* c, const Endpoint& ep) {
  // The whole handshake runs under the connect timeout: a server that accepts
  // but never answers is "unavailable", not a hang.
  redisSetTimeout(c, to_timeval(ep.connect_timeout));
  std::vector<Command> cmds;
  std::string db = std::to_string(ep.db);
  if (!ep.password.empty()) {
    if (!ep.user.empty())
      cmds.push_back(Command{"AUTH", ep.user, ep.password});
    else
      cmds.push_back(Command{"AUTH", ep.password});
  }
  if (ep.db != 0) cmds.push_back(Command{"SELECT", db});
  if (cmds.empty()) cmds.push_back(Command{"PING"});
  for (auto& cmd : cmds) redisAppendCommandArgv(c, cmd.argc(), cmd.argv(), cmd.lens());
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    void* raw = nullptr;
    if (send_output(c, /*wait=*/true) < 0 || redisGetReply(c, &raw) != REDIS_OK) {
      std::string why = context_error(c);
      throw BackendUnavailable("weave redis: " + ep.describe() + " did not answer the handshake: " + why);
    }
    Reply r(static_cast<redisReply*>(raw));
    if (r->type == REDIS_REPLY_ERROR) {
      std::string what = i == 0 && !ep.password.empty() ? "AUTH" : (ep.db != 0 ? "SELECT" : "PING");
      const std::string reply = reply_error(r.get());
      throw ReplyError("weave redis: " + ep.describe() + " refused " + what, reply, acl_hint(reply));
    }
  }
  redisSetTimeout(c, to_timeval(ep.command_timeout));
}

Connection::Connection(const Endpoint& ep) : where_(ep.describe()) {
  ctx_ = connect_raw(ep);
  try {
    handshake(ctx_, ep);
  } catch (...) {
    redisFree(ctx_);
    ctx_ = nullptr;
    throw;
  }
}

Connection::~Connection() {
  if (ctx_) redisFree(ctx_);
}

int Connection::fd() const noexcept { return ctx_->fd; }

void ReplyDeleter::operator()(redisReply* r) const noexcept {
  if (r) freeReplyObject(r);
}

void Connection::fail(const char* what) {
  int saved = errno;
  broken_ = true;
  std::string why = context_error(ctx_);
  bool timeout = ctx_->err == REDIS_ERR_IO && (saved == EAGAIN || saved == EWOULDBLOCK ||
                                                why.find("temporarily unavailable") != std::string::npos);
  failure_ = timeout ? IoFailure::timeout : IoFailure::closed;
  if (timeout) timed_out(what);
  throw IoError(std::string("weave redis: ") + what + " to " + where_ + " failed: " + why);
}

void Connection::append(const Command& c) {
  if (redisAppendCommandArgv(ctx_, c.argc(), c.argv(), c.lens()) != REDIS_OK) fail("a command");
}

void Connection::flush() { send_queued(/*wait=*/true); }

void Connection::read_available(std::vector<Reply>& out) {
  if (redisBufferRead(ctx_) != REDIS_OK) fail("a command");
  take_parsed(out, "a command");
}

void Connection::take_parsed(std::vector<Reply>& out, const char* what) {
  for (;;) {
    void* raw = nullptr;
    if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) fail(what);
    if (raw == nullptr) return;
    out.emplace_back(static_cast<redisReply*>(raw));
  }
}

bool Connection::write_some() { return send_queued(/*wait=*/false); }

bool Connection::send_queued(bool wait) {
  const int sent = send_output(ctx_, wait);
  if (sent < 0) fail("a command");  // (EAGAIN: the send timeout passed, a TimeoutError)
  return sent > 0;
}

int send_output(redisContext* c, bool wait) {
  for (;;) {
    const std::size_t queued = sdslen(c->obuf);
    if (queued == 0) return 1;
    const ssize_t n = ::send(c->fd, c->obuf, queued, MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (!wait && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
      const int saved = errno;
      c->err = REDIS_ERR_IO;
      std::snprintf(c->errstr, sizeof c->errstr, "%s", std::strerror(saved));
      errno = saved;
      return -1;
    }
    hiredis_sds::sdsrange(c->obuf, static_cast<int>(n), -1);
  }
}

void Connection::feed(const char* data, std::size_t n, std::vector<Reply>& out) {
  if (n == 0) lost("the server closed the connection");
  errno = 0;  // (a protocol error is not the event loop's last EAGAIN: not a timeout)
  if (redisReaderFeed(ctx_->reader, data, n) != REDIS_OK) fail("a reply");
  take_parsed(out, "a reply");
}

void Connection::lost(const std::string& why) {
  abandon();
  throw IoError("weave redis: the connection to " + where_ + " failed: " + why);
}

void Connection::timed_out(const char* what) {
  broken_ = true;
  failure_ = IoFailure::timeout;
  throw TimeoutError(std::string("weave redis: ") + where_ + " did not answer " + what + " in time");
}

Reply Connection::read_reply() {
  void* raw = nullptr;
  if (redisGetReply(ctx_, &raw) != REDIS_OK) fail("a command");
  return Reply(static_cast<redisReply*>(raw));
}

std::vector<Reply> Connection::pipeline(const std::vector<Command>& commands) {
  for (const auto& c : commands) append(c);
  flush();
  std::vector<Reply> out;
  out.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) out.push_back(read_reply());
  return out;
}

Reply Connection::command(const Command& c) {
  append(c);
  flush();
  return read_reply();
}

// ---- Pool ----

Pool::Pool(Endpoint endpoint, int size) : endpoint_(std::move(endpoint)), size_(size > 0 ? size : 1) {}

Pool::~Pool() = default;

Pool::Borrowed Pool::borrow() {
  {
    detail::Guard g(mutex_);
    auto deadline = std::chrono::steady_clock::now() + endpoint_.connect_timeout + endpoint_.command_timeout;
    for (;;) {
      if (!idle_.empty()) return take_idle();
      if (open_ < size_) {
        ++open_;
        break;
      }
      if (mutex_.wait_until(cv_, deadline) == std::cv_status::timeout && idle_.empty() && open_ >= size_)
        throw TimeoutError("weave redis: no free connection to " + endpoint_.describe() +
                           " (pool_size " + std::to_string(size_) + ")");
    }
  }
  return open_counted();
}

std::optional<Pool::Borrowed> Pool::try_borrow() {
  {
    detail::Guard g(mutex_);
    if (!idle_.empty()) return take_idle();
    if (open_ >= size_) return std::nullopt;
    ++open_;
  }
  return open_counted();
}

Pool::Borrowed Pool::take_idle() {
  auto c = std::move(idle_.back());
  idle_.pop_back();
  return Borrowed(this, std::move(c), false);
}

Pool::Borrowed Pool::open_counted() {
  try {
    auto fresh = std::make_unique<Connection>(endpoint_);
    std::string failed;
    {
      detail::Guard g(mutex_);
      failed.swap(failed_);
    }
    if (!failed.empty())
      detail::emit_notice(EventKind::reconnected, "store", endpoint_.describe(),
                          "connected again (the last connection " + failed + ")");
    return Borrowed(this, std::move(fresh), true);
  } catch (const std::exception& e) {
    detail::Guard g(mutex_);
    failed_ = std::string("could not connect: ") + e.what();
    --open_;
    cv_.notify_one();
    throw;
  } catch (...) {
    detail::Guard g(mutex_);
    --open_;
    cv_.notify_one();
    throw;
  }
}

std::unique_ptr<Connection> Pool::try_take() {
  detail::Guard g(mutex_);
  if (idle_.empty()) return nullptr;
  auto c = std::move(idle_.back());
  idle_.pop_back();
  --open_;
  cv_.notify_one();  // (room for one more)
  return c;
}

void Pool::adopt(std::unique_ptr<Connection> c) {
  std::unique_ptr<Connection> closed;  // (closed after the lock is let go)
  detail::Guard g(mutex_);
  if (open_ >= size_) {
    closed = std::move(c);
    return;
  }
  ++open_;
  idle_.push_back(std::move(c));
  cv_.notify_one();
}

void Pool::give_back(std::unique_ptr<Connection> c) {
  detail::Guard g(mutex_);
  if (c->broken()) {
    --open_;
    failed_ = c->last_failure() == IoFailure::timeout ? "timed out" : "failed";
  } else {
    idle_.push_back(std::move(c));
  }
  cv_.notify_one();
}

void Pool::forget(std::unique_ptr<Connection> c) {
  {
    detail::Guard g(mutex_);
    --open_;
    cv_.notify_one();
  }
  c.reset();  // (closed after the lock is let go)
}

void Pool::drop_idle() {
  std::vector<std::unique_ptr<Connection>> dead;
  {
    detail::Guard g(mutex_);
    open_ -= static_cast<int>(idle_.size());
    dead.swap(idle_);
    cv_.notify_all();
  }
}

}  // namespace weave::store
