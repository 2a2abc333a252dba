// A service with an asynchronous [[cache]] method, woven by weavegen, for
// the asynchronous cache suite (test_async_cache.cpp).
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <string>

namespace asynccache {

class Rates {
 public:
  virtual ~Rates() = default;

  // Loads suspend for 50 ms (a slow upstream).
  [[cache(name="async-rates", key="<ccy>", ttl=10min, local_ttl=5min)]]
  virtual boost::asio::awaitable<double> rate(std::string ccy) {
    ++loads_;
    const auto ex = co_await boost::asio::this_coro::executor;  // (named: g++ 12, docs/async.md)
    boost::asio::steady_timer t(ex, std::chrono::milliseconds(50));
    co_await t.async_wait(boost::asio::use_awaitable);
    co_return ccy.rfind("EUR", 0) == 0 ? 1.08 : 1.27;
  }

  int loads() const { return loads_; }

 private:
  std::atomic<int> loads_{0};
};

}  // namespace asynccache
