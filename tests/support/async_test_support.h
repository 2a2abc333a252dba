// What the asynchronous suites share: running an io_context on threads,
// run(io_threads, task) (spawns `task` on a fresh io_context run by
// `io_threads` threads and returns its result, or rethrows its exception, once
// everything on it finished), how a spawned call ended (Outcome, record), a
// cancellation at a time (CancelAfter), a name no earlier run used, and the
// process's thread count.
#pragma once

#include <unistd.h>

#include <atomic>
#include "weave/asio.h"
#include <chrono>
#include <fstream>
#include <string>

#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace async_test {

inline void run_threads(weave::net::io_context& io, int threads) {
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
}

template <class T>
T run(int threads, weave::net::awaitable<T> task) {
  weave::net::io_context io;
  std::exception_ptr error;
  if constexpr (std::is_void_v<T>) {
    weave::net::co_spawn(io, std::move(task), [&](std::exception_ptr e) { error = e; });
    run_threads(io, threads);
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<T> result;
    weave::net::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
      error = e;
      if (!e) result.emplace(std::move(value));
    });
    run_threads(io, threads);
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}

// How a spawned call ended: co_spawn(io, call, record(outcome)).
// `done` is set last: a thread that sees it reads the rest.
struct Outcome {
  std::atomic<bool> done{false};
  std::exception_ptr error;
  long value = 0;
  // Ended by a cancellation (weave::net::error::operation_aborted).
  bool aborted() const {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const weave::net::system_error& e) {
      return e.code() == weave::net::error::operation_aborted;
    } catch (...) {
    }
    return false;
  }
};

template <class T = long>
auto record(Outcome& o) {
  return [&o](std::exception_ptr e, T v) {
    o.error = e;
    o.value = static_cast<long>(v);
    o.done = true;
  };
}

// Cancels (terminal) the spawn bound to its slot() `after` from now, when
// `io` runs; lives as long as `io` runs:
//   async_test::CancelAfter cancel(io, 20ms);
//   net::co_spawn(io, svc.call(), net::bind_cancellation_slot(cancel.slot(), async_test::record(out)));
class CancelAfter {
 public:
  CancelAfter(weave::net::io_context& io, std::chrono::milliseconds after) : timer_(io, after) {
    timer_.async_wait([this](auto) { signal_.emit(weave::net::cancellation_type::terminal); });
  }
  CancelAfter(const CancelAfter&) = delete;
  CancelAfter& operator=(const CancelAfter&) = delete;
  weave::net::cancellation_slot slot() { return signal_.slot(); }

 private:
  weave::net::cancellation_signal signal_;
  weave::net::steady_timer timer_;
};

// Spawns a timer on `io` that ticks every `every` until `done()`, counting
// its ticks in `ticks`: calls that wait suspended leave the io thread free to
// tick; a wait that held the thread would leave it none.
template <class Done>
void tick_until(weave::net::io_context& io, std::chrono::milliseconds every, Done done, int& ticks) {
  weave::net::co_spawn(io, [every, done, &ticks]() -> weave::net::awaitable<void> {
    weave::net::steady_timer tick(co_await weave::net::this_coro::executor);
    while (!done()) {
      tick.expires_after(every);
      co_await tick.async_wait(weave::net::use_awaitable);
      ++ticks;
    }
  }, weave::net::detached);
}

// `name` made unique to this process and moment (keys no earlier run left behind).
inline std::string unique_name(const std::string& name) {
  static const std::string run = std::to_string(::getpid()) + "-" +
                                 std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  return name + "-" + run;
}

inline int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

}  // namespace async_test
