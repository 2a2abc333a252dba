#include "store/async_run.h"

#include <sys/ioctl.h>

#include <array>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>

#include "store/cluster_executor.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {
namespace {

namespace asio = boost::asio;

// The connection's socket, watched by the coroutine's io_context for the
// round trip only; given back to the connection blocking, as hiredis uses it.
class Watched {
 public:
  Watched(const asio::any_io_executor& ex, int fd) : d_(ex, fd) {}
  ~Watched() {
    int blocking = 0;
    ::ioctl(d_.native_handle(), FIONBIO, &blocking);  // (asio made it non-blocking)
    d_.release();                                     // not closed: the connection's
  }
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;
  asio::posix::stream_descriptor& operator*() noexcept { return d_; }

 private:
  asio::posix::stream_descriptor d_;
};

// Reads until every reply of the flight's last send arrived.
asio::awaitable<void> read_flight(Connection& conn, NodeExecutor::InFlight& flight,
                                  std::chrono::milliseconds timeout) {
  const asio::any_io_executor ex = co_await asio::this_coro::executor;
  Watched socket(ex, conn.fd());
  asio::steady_timer timer(ex, timeout);
  std::array<char, 4096> buf;
  while (!flight.complete()) {
    // (the timer waits again each turn: wait_for_one cancelled its last wait)
    auto [order, read_error, n, timer_error] =
        co_await asio::experimental::make_parallel_group((*socket).async_read_some(asio::buffer(buf), asio::deferred),
                                                         timer.async_wait(asio::deferred))
            .async_wait(asio::experimental::wait_for_one(),
                        asio::bind_cancellation_slot(asio::cancellation_slot(), asio::use_awaitable));
    if (order[0] == 1) conn.timed_out("a command");
    if (read_error) conn.lost(read_error == asio::error::eof ? "the server closed the connection" : read_error.message());
    conn.feed(buf.data(), n, flight.replies);
  }
}

}  // namespace

asio::awaitable<std::optional<std::vector<Reply>>> try_run_async(Executor& exec, const std::vector<ScriptCall>& calls,
                                                                const char* what) {
  const Executor::Direct direct = exec.direct(calls);
  if (!direct.node) co_return std::nullopt;
  NodeExecutor& node = *direct.node;
  std::optional<NodeExecutor::InFlight> flight = node.start_now(calls);
  if (!flight) co_return std::nullopt;
  // Destroyed before every reply was read (the coroutine destroyed without
  // resuming, its io_context gone): the connection must not go back with
  // them pending. (Declared after `flight`: it runs first.)
  struct Unfinished {
    NodeExecutor::InFlight& flight;
    bool finished = false;
    ~Unfinished() {
      if (!finished) flight.connection().abandon();
    }
  } unfinished{*flight};
  // Sent: read it to the end even if the coroutine is cancelled meanwhile.
  const bool throw_if_cancelled = co_await asio::this_coro::throw_if_cancelled();
  co_await asio::this_coro::throw_if_cancelled(false);
  std::optional<std::vector<Reply>> replies;
  std::exception_ptr error;
  try {
    for (;;) {
      co_await read_flight(flight->connection(), *flight, node.endpoint().command_timeout);
      replies = node.take_replies(*flight, calls);
      if (replies) break;  // (else the calls the server had lost went again, as EVAL)
    }
    unfinished.finished = true;
  } catch (...) {
    error = std::current_exception();  // (the connection is marked broken already)
  }
  co_await asio::this_coro::throw_if_cancelled(throw_if_cancelled);
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const IoError&) {
      if (direct.resends || node.retry_after(*flight)) co_return std::nullopt;  // run() sends them again
      throw;
    }
  }
  for (const Reply& r : *replies) {
    if (r->type != REDIS_REPLY_ERROR) continue;
    if (direct.resends && is_cluster_redirect(std::string_view(r->str, r->len))) co_return std::nullopt;
    bad_reply(r.get(), what);
  }
  co_return replies;
}

}  // namespace weave::store
