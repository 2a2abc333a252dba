#pragma once
#include <string>

class Pricing {
 public:
  virtual ~Pricing() = default;
  [[timed(label="quote:<sku>")]] virtual int quote(const std::string& sku) { return static_cast<int>(sku.size()); }
};
