// A service with an asynchronous [[cache]] method, woven by weavegen, for
// the asynchronous cache suite (test_async_cache.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "weave/asio.h"
#include "weave/json_codec.h"

namespace asynccache {

inline weave::net::awaitable<void> sleep_ms(int ms) {
  const auto ex = co_await weave::net::this_coro::executor;  // (named: g++ 12, docs/async.md)
  weave::net::steady_timer t(ex, std::chrono::milliseconds(ms));
  co_await t.async_wait(weave::net::use_awaitable);
}

class Rates {
 public:
  virtual ~Rates() = default;

  // Loads suspend for 50 ms (a slow upstream).
  [[cache(name="async-rates", key="<ccy>", ttl=10min, local_ttl=5min)]]
  virtual weave::net::awaitable<double> rate(std::string ccy) {
    ++loads_;
    co_await sleep_ms(50);
    co_return ccy.rfind("EUR", 0) == 0 ? 1.08 : 1.27;
  }

  int loads() const { return loads_; }

 private:
  std::atomic<int> loads_{0};
};

// The shape of the cache suite's shop::Product (cache_methods.h): what the
// suite's cache_worker processes store, read here as another process would.
struct Quote {
  std::string id;
  int cents = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Quote, id, cents)

// sync=true: one load per deployment. A load waits, suspended, until
// open() (so that a test holds it while others wait).
class Quotes {
 public:
  virtual ~Quotes() = default;

  [[cache(name="async-quotes", key="<id>", ttl=10min, sync=true)]]
  virtual weave::net::awaitable<std::optional<Quote>> find(std::string id) {
    ++loads_;
    while (!open_) co_await sleep_ms(1);  // (a test's gate: the user's body may poll, Weave does not)
    co_return Quote{id, 100};
  }

  // Lets every held load and every later one go on.
  void open() { open_ = true; }
  int loads() const { return loads_; }

 private:
  std::atomic<int> loads_{0};
  std::atomic<bool> open_{false};
};

}  // namespace asynccache
