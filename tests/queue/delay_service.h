// A woven service whose calls are delayed, for test_delay.cpp: a [[delay]]
// method with a [[lock]] below it (it throws for an order id "fail..."), one
// due later, and one that always throws.
#pragma once

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "weave/lease.h"

namespace delaytest {

struct Item {
  std::string sku;
  int qty = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Item, sku, qty)

class Orders {
 public:
  virtual ~Orders() = default;

  [[delay(queue="delay-orders", retries=2, backoff=10ms)]]
  [[lock(key="delay:order:<order_id>", ttl=5s, wait=5s)]]
  virtual void cancel_if_unpaid(const std::string& order_id, std::vector<Item> items) {
    if (order_id.starts_with("fail")) throw std::runtime_error("declined " + order_id);
    std::lock_guard g(mutex);
    std::string line = order_id;
    for (const Item& i : items) line += " " + i.sku + "x" + std::to_string(i.qty);
    if (weave::current_lease()) line += " locked";
    ran.push_back(line);
  }

  [[delay(queue="delay-later", after=400ms)]]
  virtual void later(int n) {
    std::lock_guard g(mutex);
    ran.push_back("later " + std::to_string(n));
  }

  [[delay(queue="delay-flaky", retries=2, backoff=10ms)]]
  virtual void flaky(const std::string& why) {
    ++flaky_calls;
    throw std::runtime_error(why);
  }

  std::vector<std::string> lines() {
    std::lock_guard g(mutex);
    return ran;
  }

  std::mutex mutex;
  std::vector<std::string> ran;
  std::atomic<int> flaky_calls{0};
};

}  // namespace delaytest
