// Another target: includes only the proxy header and gets no attribute flag
// (the .weave.h silences the warnings around its own #include).
#include <cstdio>

#include "greeter.weave.h"

int main() {
  weave::Woven<Greeter> woven;
  Greeter& greeter = woven;
  std::printf("%s\n", greeter.greet("world").c_str());
  return 0;
}
