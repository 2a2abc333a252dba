// The awaitable method the resilience benchmark times out: it waits `ms` on
// a timer, far past its deadline.
#pragma once

#include <chrono>

#include "weave/asio.h"

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  [[timeout(after=20ms)]] virtual weave::net::awaitable<long> sleep(long ms) {
    weave::net::steady_timer t(co_await weave::net::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(weave::net::use_awaitable);
    co_return ms;
  }
};
