#include "store/asio/async_run.h"

#include <array>
#include <exception>

#include "store/cluster_executor.h"
#include "store/asio/direct_links.h"
#include "store/reply.h"
#include "weave/asio.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {
namespace {

// An operation of a round trip: not cancellable (an empty slot), its error
// returned, not thrown.
auto uncancellable() { return net::bind_cancellation_slot(net::cancellation_slot(), net::as_tuple(net::use_awaitable)); }

// Writes what the flight queued, then reads until every reply of it arrived.
net::awaitable<void> round_trip(DirectLink& link, NodeExecutor::InFlight& flight) {
  Connection& conn = link.connection();
  link.start_round_trip();
  while (!conn.write_some()) {  // (the socket is full: rare, a long pipeline)
    auto [error] = co_await link.socket().async_wait(net::posix::descriptor_base::wait_write, uncancellable());
    if (link.timed_out()) conn.timed_out("a command");
    if (error) conn.lost(error.message());
  }
  std::array<char, 4096> buf;
  while (!flight.complete()) {
    auto [error, n] = co_await link.socket().async_read_some(net::buffer(buf), uncancellable());
    if (link.timed_out()) conn.timed_out("a command");
    if (error) conn.lost(error == net::error::eof ? "the server closed the connection" : error.message());
    conn.feed(buf.data(), n, flight.replies);
  }
}

}  // namespace

net::awaitable<std::optional<std::vector<Reply>>> try_run_async(Executor& exec, const std::vector<ScriptCall>& calls,
                                                                const char* what) {
  const Executor::Direct direct = exec.direct(calls);
  if (!direct.node) co_return std::nullopt;
  NodeExecutor& node = *direct.node;
  const net::any_io_executor ex = co_await net::this_coro::executor;
  DirectLinks& links = DirectLinks::of(ex);
  // Given back when this frame goes: closed unless finished (a coroutine
  // destroyed mid round trip must not leave its replies to the next one).
  DirectLinks::Use link = links.take(node, ex);
  if (!link) co_return std::nullopt;
  NodeExecutor::InFlight flight = node.queue_on(link->connection(), calls);
  // Written: read it to the end even if the coroutine is cancelled meanwhile.
  const bool throw_if_cancelled = co_await net::this_coro::throw_if_cancelled();
  co_await net::this_coro::throw_if_cancelled(false);
  std::optional<std::vector<Reply>> replies;
  std::exception_ptr error;
  try {
    for (;;) {
      co_await round_trip(*link, flight);
      replies = node.take_replies(flight, calls);
      if (replies) break;  // (else the calls the server had lost were queued again, as EVAL)
    }
    link.finished();
  } catch (...) {
    error = std::current_exception();  // (the connection is marked broken already)
  }
  co_await net::this_coro::throw_if_cancelled(throw_if_cancelled);
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const IoError&) {
      const bool died_while_idle = node.retry_after(flight);
      if (died_while_idle) links.drop_idle(node);
      if (direct.resends || died_while_idle) co_return std::nullopt;  // run() sends them again
      throw;
    }
  }
  for (const Reply& r : *replies) {
    const ReplyView reply(r, what);
    if (reply.kind() != ReplyView::Kind::error) continue;
    if (direct.resends && is_cluster_redirect(reply.error())) co_return std::nullopt;
    reply.unexpected();
  }
  co_return replies;
}

}  // namespace weave::store
