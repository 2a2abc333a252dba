// A LockBackend whose acquire and release a coroutine can await without a
// thread hop: the Redis backends over one store Executor
// (lock/redis/script_backend.cpp, through store/async_run.h). The
// asynchronous lock (lock/asio/) uses it when the client's backend is one;
// every other backend's calls run on the store pool.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>

#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

class DirectLockBackend {
 public:
  // acquire() / release() from the awaiting coroutine's thread, the same
  // results and errors; nullopt when the request was left undone (call
  // acquire() / release() where blocking is allowed).
  virtual boost::asio::awaitable<std::optional<AcquireResult>> acquire_direct(const AcquireRequest& r) = 0;
  virtual boost::asio::awaitable<std::optional<ReleaseResult>> release_direct(const ReleaseRequest& r) = 0;

 protected:
  ~DirectLockBackend() = default;
};

}  // namespace weave::detail
