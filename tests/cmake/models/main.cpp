#include <cstdio>

#include "a/model.weave.h"
#include "b/model.weave.h"

int main() {
  weave::Woven<a::Model> wa;
  weave::Woven<b::Model> wb;
  a::Model& ma = wa;
  b::Model& mb = wb;
  std::printf("%s, %s, %d\n", ma.name("x").c_str(), mb.name("y").c_str(), mb.size());
  return 0;
}
