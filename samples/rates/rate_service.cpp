#include "rate_service.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <stdexcept>

namespace rates {

namespace {
boost::asio::awaitable<void> pause(std::chrono::milliseconds d) {
  const auto ex = co_await boost::asio::this_coro::executor;
  boost::asio::steady_timer t(ex, d);
  co_await t.async_wait(boost::asio::use_awaitable);
}
}  // namespace

boost::asio::awaitable<double> RateService::rate(std::string ccy) {
  ++rate_loads_;
  co_await pause(std::chrono::milliseconds(20));  // a slow upstream
  if (ccy == "EUR") co_return 1.08;
  if (ccy == "GBP") co_return 1.27;
  if (ccy == "JPY") co_return 0.0067;
  throw std::invalid_argument("unknown currency " + ccy);
}

boost::asio::awaitable<double> RateService::convert(std::string account, std::string ccy, double amount) {
  const int now = ++inside_;
  for (int m = most_inside_; now > m && !most_inside_.compare_exchange_weak(m, now);) {
  }
  const double r = co_await rate(ccy);  // a nested woven call: cached
  co_await pause(std::chrono::milliseconds(50));  // the account's ledger write
  --inside_;
  (void)account;
  co_return amount * r;
}

}  // namespace rates
