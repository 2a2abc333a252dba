// What test_cli.cpp stores through the features before `weave` looks at it.
#pragma once

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

}  // namespace clitest
