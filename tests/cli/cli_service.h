// What test_cli.cpp stores through the features before `weave` looks at it.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>

namespace clitest {

class Shop {
 public:
  virtual ~Shop() = default;

  [[cache(name="cli-price", key="<sku>", ttl=10min)]]
  virtual int price(const std::string& sku) {
    ++loads;
    return static_cast<int>(sku.size());
  }

  [[dedupe(key="cli-pay:<order>", window=10min, on_duplicate=replay)]]
  virtual int pay(const std::string& order) { return static_cast<int>(order.size()) * 10; }

  int loads = 0;
};

class Reports {
 public:
  virtual ~Reports() = default;
  // Throws on its first attempts, so its last run's record has an error to show.
  [[scheduled(every=100ms, retries=1, backoff=10ms, name="cli-report")]]
  virtual void run() {
    if (++runs == 1) throw std::runtime_error("not yet");
  }
  std::atomic<int> runs{0};
};

}  // namespace clitest
