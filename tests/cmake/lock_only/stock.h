#pragma once
#include <string>

class Stock {
 public:
  virtual ~Stock() = default;
  [[lock(key="stock:<sku>", ttl=5s)]] virtual std::string reserve(const std::string& sku, int n);
  int left = 3;
};
