// Catch's main for every test executable. A feature suite's executable
// (weave_add_store_suite) leaves out, when run by hand without a test spec,
// the cases its store cannot run, as its CTest entries do: "[redis]" ones on
// mem://, "[mem]" ones on a Redis store (tests/stores/store_under_test.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

// Defined by the store library of a suite's executable, nowhere else.
extern "C" bool test_store_is_mem() __attribute__((weak));

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  if (test_store_is_mem && session.configData().testsOrTags.empty())
    session.configData().testsOrTags.push_back(test_store_is_mem() ? "~[redis]" : "~[mem]");
  return session.run();
}
