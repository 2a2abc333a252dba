// The service behind the rates sample's HTTP handlers: asynchronous methods
// (boost::asio::awaitable) that Weave caches and locks.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <string>

namespace rates {

class RateService {
 public:
  virtual ~RateService() = default;

  // One load per currency a minute, shared by every request (and, on Redis,
  // by every process).
  [[cache(name="rates", key="<ccy>", ttl=1min, local_ttl=30s)]]
  virtual boost::asio::awaitable<double> rate(std::string ccy);

  // One conversion per account at a time: a request for a busy account waits
  // (suspended, holding no thread) up to 2 s.
  [[lock(key="account:<account>", ttl=5s, wait=2s)]]
  virtual boost::asio::awaitable<double> convert(std::string account, std::string ccy, double amount);

  int rate_loads() const { return rate_loads_; }
  int most_inside() const { return most_inside_; }

 private:
  std::atomic<int> rate_loads_{0};
  std::atomic<int> inside_{0}, most_inside_{0};
};

}  // namespace rates
