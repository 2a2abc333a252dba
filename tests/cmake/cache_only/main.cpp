#include <cstdio>

#include "pricing.weave.h"

int main() {
  weave::Woven<Pricing> pricing;
  Pricing& p = pricing;
  const int first = p.quote("lamp"), second = p.quote("lamp");
  std::printf("cached lamp -> %d, %d after %d load(s)\n", first, second, p.loads);
  return first == 4 && second == 4 && p.loads == 1 ? 0 : 1;
}
