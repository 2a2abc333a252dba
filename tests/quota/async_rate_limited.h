// Asynchronous methods under [[rate_limit]], woven by weavegen, for the
// asynchronous rate limit suite (test_async_rate_limit.cpp).
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "weave/asio.h"

namespace asyncquotas {

class Api {
 public:
  virtual ~Api() = default;

  // One every 500 ms; a call waits for its turn (suspended), up to 10 s.
  [[rate_limit(key="mail:<tenant>", rate=2/s, burst=1, on_limit=wait, wait=10s)]]
  virtual weave::net::awaitable<long> send(std::string tenant, long n) {
    (void)tenant;
    ++runs;
    co_return n;
  }

  // One an hour: a second call throws weave::RateLimited.
  [[rate_limit(key="api:<user>", rate=1/h)]]
  virtual weave::net::awaitable<long> handle(std::string user) {
    (void)user;
    co_return ++runs;
  }

  // Over the rate the method is skipped: std::nullopt.
  [[rate_limit(key="poll:<source>", rate=1/h, on_limit=skip)]]
  virtual weave::net::awaitable<std::optional<long>> poll(std::string source) {
    (void)source;
    co_return ++runs;
  }

  std::atomic<long> runs{0};
};

}  // namespace asyncquotas
