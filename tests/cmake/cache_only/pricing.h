#pragma once
#include <string>

class Pricing {
 public:
  virtual ~Pricing() = default;
  [[cache(key="<sku>", ttl=10min, sync=true)]] virtual int quote(const std::string& sku) {
    ++loads;
    return static_cast<int>(sku.size());
  }
  int loads = 0;
};
