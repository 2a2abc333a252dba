// Store calls from a coroutine without a thread hop (the async component: the
// store itself has no Asio): the calls are written on one of the node's
// connections kept registered with the coroutine's execution context
// (store/asio/direct_links.h; a script the node has not been
// sent yet is loaded in the same round trip) and the replies read as its
// reactor reports them: no thread hop (a store-pool thread costs two thread
// wake-ups per round trip). What it cannot do without blocking it leaves to
// Executor::run(), which the caller runs where it may block:
//
//   std::optional<std::vector<store::Reply>> r = co_await store::try_run_async(*exec, calls, "acquire");
//   if (!r) r = co_await run_on(store_pool(), [&] { return exec->run(calls, "acquire"); });
#pragma once

#include "weave/asio.h"
#include <optional>
#include <vector>

#include "store/direct_request.h"
#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

// exec.run(calls, what) without blocking the calling thread: the same replies
// and the same errors (ReplyError for an error reply, TimeoutError after the
// node's command timeout, IoError). nullopt when the calls are left to run():
// sent nothing (no link idle and no pooled connection idle to make one of,
// no single node for them) or met what run() handles by sending again (a
// cluster redirect, a connection that had died while idle, a cluster
// connection error).
// Once written, the round trip is not cancellable, like a job of the store
// pool: the awaiting coroutine checks its cancellation after.
net::awaitable<std::optional<std::vector<Reply>>> try_run_async(
    Executor& exec, const std::vector<ScriptCall>& calls, const char* what);
// A feature's request (store/direct_request.h): its result, or nullopt when
// it is left to the blocking path.
template <class Result>
net::awaitable<std::optional<Result>> try_run_async(const DirectRequest<Result>& request) {
  const std::optional<std::vector<Reply>> replies =
      co_await try_run_async(request.executor(), request.calls(), request.what());
  if (!replies) co_return std::nullopt;
  co_return request.result(*replies);
}

}  // namespace weave::store
