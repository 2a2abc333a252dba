// Threads for work that blocks and must not block an io_context, and
// run_on(), which runs such work there and resumes the awaiting coroutine on
// its own executor:
//
//   AcquireResult r = co_await run_on(store_pool(), [&] { return backend.acquire(request); });
//
// A job runs on an idle thread or, under the pool's cap, on a new one; idle
// threads end after a while. A fork()ed child starts with none.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>

#include "core/process.h"
#include "weave/abi.h"
#include "weave/asio.h"

namespace WEAVE_NAMESPACE::detail {

class BlockingPool {
 public:
  // `max_threads` 0: no cap (a job never waits for a thread). `jobs`
  // end_by_themselves: each ends within a bounded time (a store round trip),
  // so destroying the context that awaits one may wait for it (run_on); a
  // job that may wait for its own context cannot be waited for.
  enum class Jobs { end_by_themselves, may_wait_for_their_context };
  BlockingPool(int max_threads, Jobs jobs);
  bool jobs_end_by_themselves() const noexcept { return jobs_ == Jobs::end_by_themselves; }
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;
  // Runs `job` on a thread of the pool. `job` must not throw.
  void run(std::function<void()> job);
  // Jobs handed to the pool so far.
  std::uint64_t jobs() const noexcept;

  struct State;  // blocking_pool.cpp

 private:
  std::shared_ptr<State> state_;
  Jobs jobs_;
};

// A plain Interceptor's around() on an asynchronous method: no cap (its
// proceed() waits on its thread for the rest of the call, which may need
// another such thread). Its jobs wait for their context: destroy an
// io_context only once its calls have ended.
BlockingPool& interceptor_pool();
// Store round trips of asynchronous calls (a Redis acquire, a release): 8
// threads however many calls wait. Destroying an io_context waits for its
// round trips still on the pool (each ends within the store's timeouts).
BlockingPool& store_pool();

// The jobs of one execution context (an io_context) still on a pool: its
// destruction waits for them to hand their completions back (a store round
// trip ends within its timeouts), so that no job posts into a context that
// is gone. Its scheduler then destroys those completions with the rest.
class JobsInFlight final : public net::execution_context::service {
 public:
  using key_type = JobsInFlight;
  static net::execution_context::id id;
  explicit JobsInFlight(net::execution_context& context);
  void begin();
  // The job's last touch of its context: after it, the context may be gone.
  void end() noexcept;

 private:
  void shutdown() override;
  Mutex mutex_;
  std::condition_variable done_;
  std::size_t running_ WEAVE_GUARDED_BY(mutex_) = 0;
};

// Runs `job` on `pool`; the awaiting coroutine resumes on its executor with
// the job's result, or its exception.
template <class Job>
net::awaitable<std::invoke_result_t<Job&>> run_on(BlockingPool& pool, Job job) {
  using R = std::invoke_result_t<Job&>;
  std::exception_ptr error;
  std::conditional_t<std::is_void_v<R>, bool, std::optional<R>> result{};
  co_await net::async_initiate<decltype(net::use_awaitable), void()>(
      [&](auto handler) {
        // The caller's io_context keeps running while the job runs.
        auto work = net::prefer(net::get_associated_executor(handler),
                                net::execution::outstanding_work.tracked);
        JobsInFlight* in_flight = nullptr;
        if (pool.jobs_end_by_themselves()) {
          in_flight = &net::use_service<JobsInFlight>(net::query(work, net::execution::context));
          in_flight->begin();
        }
        // (std::function wants a copyable job: the move-only handler is shared.)
        auto resume = std::make_shared<decltype(handler)>(std::move(handler));
        pool.run([&, resume, work = std::optional(std::move(work)), in_flight]() mutable {
          try {
            if constexpr (std::is_void_v<R>)
              job();
            else
              result.emplace(job());
          } catch (...) {
            error = std::current_exception();
          }
          net::post(*work, [resume] { std::move (*resume)(); });
          // Nothing of the context outlives end(): the completion (and the
          // coroutine it owns) is the context's to run or destroy.
          resume.reset();
          work.reset();
          if (in_flight) in_flight->end();
        });
      },
      net::use_awaitable);
  if (error) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<R>) co_return std::move(*result);
}

// A store call of an asynchronous call: inline when the store lives in this
// process (mem://: cheaper than a thread hop), else on the store pool.
template <class F>
net::awaitable<std::invoke_result_t<F&>> store_call(bool in_process, F f) {
  if (in_process) co_return f();
  co_return co_await run_on(store_pool(), std::move(f));
}

}  // namespace weave::detail
