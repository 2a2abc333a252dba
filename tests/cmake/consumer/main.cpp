#include <cstdio>

#include "greeter.weave.h"
#include "weave/lease.h"

std::string Greeter::greet(const std::string& name) {
  const weave::Lease* lease = weave::current_lease();
  return lease ? "locked " + lease->key() : "unlocked " + name;
}

int main() {
  weave::Woven<Greeter> woven;
  Greeter& greeter = woven;
  std::printf("%s\n", greeter.greet("world").c_str());
  return 0;
}
