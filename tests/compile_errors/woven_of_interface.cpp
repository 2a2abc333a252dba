// Must not compile: naming Woven<I> for an interface, whose generated class
// is its decorator. The error must point there, e.g. for a static factory
// (tests/compile_errors/CMakeLists.txt checks it).
#include <weave/woven.h>

struct Store {
  virtual ~Store() = default;
  [[lock(key="open")]] static Store* Open();
  virtual int get() = 0;
};

int main() {
  Store* s = weave::Woven<Store>::Open();
  return s->get();
}
