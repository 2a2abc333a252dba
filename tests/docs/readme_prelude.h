// What the README's snippets take for granted: the application's own types
// and functions they mention without declaring.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <weave/config.h>
#include <weave/decorator.h>
#include <weave/interceptor.h>
#include <weave/lock.h>
#include <weave/woven.h>

struct Receipt {
  std::string id;
};
struct Item {
  std::string sku;
};
struct Report {
  std::string text;
};
void log(std::string_view event, std::string_view method);
