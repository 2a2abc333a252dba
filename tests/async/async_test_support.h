// Running coroutines in tests: run(io_threads, task) spawns `task` on a fresh
// io_context run by `io_threads` threads and returns its result (or rethrows
// its exception) once everything on the io_context finished.
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace async_test {

inline void run_threads(boost::asio::io_context& io, int threads) {
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
}

template <class T>
T run(int threads, boost::asio::awaitable<T> task) {
  boost::asio::io_context io;
  std::exception_ptr error;
  if constexpr (std::is_void_v<T>) {
    boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e) { error = e; });
    run_threads(io, threads);
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<T> result;
    boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
      error = e;
      if (!e) result.emplace(std::move(value));
    });
    run_threads(io, threads);
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}

}  // namespace async_test
