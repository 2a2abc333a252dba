// A LockBackend whose acquire and release a coroutine can send without a
// thread hop: the Redis backends over one store Executor
// (lock/redis/script_backend.cpp). The backend builds each request's script
// call and reads its reply (store/direct_request.h); the asynchronous lock
// (lock/asio/) sends it from the coroutine's thread (store/asio/async_run.h)
// when the client's backend is one; every other backend's calls run on the
// store pool. No Asio here: the Redis backends do not depend on it.
#pragma once

#include <memory>

#include "store/direct_request.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

class DirectLockBackend {
 public:
  // acquire(r) / release(r) as a request to send: the same results and
  // errors once its replies are read.
  virtual std::unique_ptr<store::DirectRequest<AcquireResult>> direct_acquire(const AcquireRequest& r) = 0;
  virtual std::unique_ptr<store::DirectRequest<ReleaseResult>> direct_release(const ReleaseRequest& r) = 0;

 protected:
  ~DirectLockBackend() = default;
};

}  // namespace weave::detail
