// Must not compile: what a .weave.h made by a weavegen of another revision
// starts with. The error must name both revisions and the fix
// (tests/compile_errors/CMakeLists.txt checks it).
#include <weave/generated.h>

WEAVE_CHECK_GENERATED_REVISION(WEAVE_GENERATED_REVISION + 1);

int main() { return 0; }
