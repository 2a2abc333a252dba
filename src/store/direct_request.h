// A feature's store request that a coroutine sends from its own thread,
// without a thread hop: the script calls the feature built and how it reads
// their replies. A feature's Redis backend makes it (lock/direct_backend.h,
// dedupe/direct_claims.h); the async component sends it
// (store/asio/async_run.h). No Asio here: only the async component needs it.
//
//   std::unique_ptr<DirectRequest<R>> q = std::make_unique<DirectCall<R, AcquireCommand>>(exec, "acquire", ...);
//   std::optional<R> r = co_await store::try_run_async(*q);   // (the async component)
#pragma once

#include <utility>
#include <vector>

#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

template <class Result>
class DirectRequest {
 public:
  DirectRequest(Executor& exec, const char* what) noexcept : exec_(exec), what_(what) {}
  virtual ~DirectRequest() = default;
  DirectRequest(const DirectRequest&) = delete;
  DirectRequest& operator=(const DirectRequest&) = delete;

  Executor& executor() const noexcept { return exec_; }
  // Names the request in errors ("acquire").
  const char* what() const noexcept { return what_; }
  // The calls; they point into this request: keep it while they are sent.
  const std::vector<ScriptCall>& calls() const noexcept { return calls_; }
  // What the blocking request returns (or throws) for these replies, one per
  // call in order.
  virtual Result result(const std::vector<Reply>& replies) const = 0;

 protected:
  std::vector<ScriptCall> calls_;

 private:
  Executor& exec_;
  const char* what_;
};

// The one call of a `Command` built in place (a feature's request class:
// call() gives its ScriptCall, parse(reply) reads the reply).
template <class Result, class Command>
class DirectCall final : public DirectRequest<Result> {
 public:
  template <class... Args>
  DirectCall(Executor& exec, const char* what, Args&&... args)
      : DirectRequest<Result>(exec, what), command_(std::forward<Args>(args)...) {
    this->calls_.push_back(command_.call());
  }
  Result result(const std::vector<Reply>& replies) const override { return command_.parse(replies.front()); }

 private:
  Command command_;
};

}  // namespace weave::store
