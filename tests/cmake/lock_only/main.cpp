#include <cstdio>

#include "stock.weave.h"

int main() {
  weave::Woven<Stock> woven;
  Stock& stock = woven;
  const std::string said = stock.reserve("lamp", 1);
  std::printf("%s\n", said.c_str());
  return said == "locked stock:lamp -> 2" ? 0 : 1;
}
