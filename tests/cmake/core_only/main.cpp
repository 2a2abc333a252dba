#include <cstdio>
#include <string>

#include "timed.weave.h"
#include "weave/interceptor.h"

int main() {
  std::string seen;
  weave::InterceptorRegistry::global().add("timed", [&](weave::Invocation& inv) {
    seen = std::string(inv.annotation().text("label"));
    inv.proceed();
  });
  weave::Woven<Pricing> pricing;
  const int price = static_cast<Pricing&>(pricing).quote("lamp");
  std::printf("timed %s -> %d\n", seen.c_str(), price);
  return seen == "quote:lamp" && price == 4 ? 0 : 1;
}
