// The service bench_async_lock weaves: the same [[lock]] on a synchronous
// method and on an asynchronous one, an asynchronous one under a no-op
// asynchronous interceptor (the chain's own cost), and an asynchronous one
// that holds its lock across a suspension (for the contended run).
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <string>

class Accounts {
 public:
  virtual ~Accounts() = default;

  [[lock(key="bench:sync:<id>", ttl=10s)]]
  virtual long add_sync([[maybe_unused]] std::string id) { return ++count_; }

  [[lock(key="bench:async:<id>", ttl=10s)]]
  virtual boost::asio::awaitable<long> add([[maybe_unused]] std::string id) { co_return ++count_; }

  // The chain's own cost: one asynchronous interceptor that only proceeds.
  [[noop]]
  virtual boost::asio::awaitable<long> touch([[maybe_unused]] std::string id) { co_return ++count_; }

  // Holds the lock for `us` microseconds of suspension.
  [[lock(key="bench:held:<id>", ttl=10s, wait=10min)]]
  virtual boost::asio::awaitable<long> hold([[maybe_unused]] std::string id, int us) {
    const auto ex = co_await boost::asio::this_coro::executor;
    boost::asio::steady_timer t(ex, std::chrono::microseconds(us));
    co_await t.async_wait(boost::asio::use_awaitable);
    co_return ++count_;
  }

 private:
  std::atomic<long> count_{0};
};
