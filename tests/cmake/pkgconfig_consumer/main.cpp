// Locks on mem:// and reads the metrics: links every library of the package
// and finds the registered backends (prints "ok").
#include <iostream>
#include <string>

#include "weave/lock.h"
#include "weave/metrics.h"

int main() {
  weave::LockClient locks({.url = "mem://pkgconfig"});
  {
    weave::LeaseHandle held = locks.acquire("pkgconfig:1");
    if (held->fencing_token() == 0) return 1;
  }
  // A Redis scheme is known when its library's registration object was linked.
  try {
    weave::LockClient redis({.url = "redis://127.0.0.1:1"});
  } catch (const std::exception& e) {
    std::cerr << "redis:// unknown: " << e.what() << '\n';
    return 1;
  }
  const std::string text = weave::metrics_text();
  if (text.find("weave_lock_acquired_total{lock=\"\"} 1") == std::string::npos) {
    std::cerr << text;
    return 1;
  }
  std::cout << "ok\n";
  return 0;
}
