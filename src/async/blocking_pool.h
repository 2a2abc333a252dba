// Threads for work that blocks and must not block an io_context, and
// run_on(), which runs such work there and resumes the awaiting coroutine on
// its own executor:
//
//   AcquireResult r = co_await run_on(store_pool(), [&] { return backend.acquire(request); });
//
// A job runs on an idle thread or, under the pool's cap, on a new one; idle
// threads end after a while. A fork()ed child starts with none.
#pragma once

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

class WEAVE_API BlockingPool {
 public:
  // `max_threads` 0: no cap (a job never waits for a thread).
  explicit BlockingPool(int max_threads);
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;
  // Runs `job` on a thread of the pool. `job` must not throw.
  void run(std::function<void()> job);
  // Jobs handed to the pool so far.
  std::uint64_t jobs() const noexcept;

  struct State;  // blocking_pool.cpp

 private:
  std::shared_ptr<State> state_;
};

// A plain Interceptor's around() on an asynchronous method: no cap (its
// proceed() waits on its thread for the rest of the call, which may need
// another such thread).
WEAVE_API BlockingPool& interceptor_pool();
// Store round trips of asynchronous calls (a Redis acquire, a release): 8
// threads however many calls wait.
WEAVE_API BlockingPool& store_pool();

// Runs `job` on `pool`; the awaiting coroutine resumes on its executor with
// the job's result, or its exception.
template <class Job>
boost::asio::awaitable<std::invoke_result_t<Job&>> run_on(BlockingPool& pool, Job job) {
  using R = std::invoke_result_t<Job&>;
  std::exception_ptr error;
  std::conditional_t<std::is_void_v<R>, bool, std::optional<R>> result{};
  co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void()>(
      [&](auto handler) {
        // The caller's io_context keeps running while the job runs.
        auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler),
                                        boost::asio::execution::outstanding_work.tracked);
        // (std::function wants a copyable job: the move-only handler is shared.)
        auto resume = std::make_shared<decltype(handler)>(std::move(handler));
        pool.run([&, resume, work = std::move(work)] {
          try {
            if constexpr (std::is_void_v<R>)
              job();
            else
              result.emplace(job());
          } catch (...) {
            error = std::current_exception();
          }
          boost::asio::post(work, [resume] { std::move (*resume)(); });
        });
      },
      boost::asio::use_awaitable);
  if (error) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<R>) co_return std::move(*result);
}

// A store call of an asynchronous call: inline when the store lives in this
// process (mem://: cheaper than a thread hop), else on the store pool.
template <class F>
boost::asio::awaitable<std::invoke_result_t<F&>> store_call(bool in_process, F f) {
  if (in_process) co_return f();
  co_return co_await run_on(store_pool(), std::move(f));
}

}  // namespace weave::detail
