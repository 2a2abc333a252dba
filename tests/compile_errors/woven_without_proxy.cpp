// Must not compile: naming the proxy of a class weavegen never saw. The
// error must say what to do (tests/compile_errors/CMakeLists.txt checks it).
#include <weave/woven.h>

struct NeverAnnotated {
  virtual ~NeverAnnotated() = default;
  virtual int f() { return 1; }
};

int main() {
  weave::Woven<NeverAnnotated> w;
  return w.f();
}
