// What the snippets of README.md and docs/*.md take for granted: the
// application's own types and functions they mention without declaring.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <weave/config.h>
#include <weave/decorator.h>
#include <weave/interceptor.h>
#include <weave/lock.h>
#include <weave/woven.h>

struct Product {
  std::string id;
  int cents = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Product, id, cents)
struct Receipt {
  std::string id;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Receipt, id)
struct Item {
  std::string sku;
};
struct Order {
  std::string id;
  int cents = 0;
};
struct OrderTimeout {
  std::string order;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OrderTimeout, order)
void handle(const OrderTimeout& timeout);
struct Report {
  std::string text;
};
void log(std::string_view event, std::string_view method);
