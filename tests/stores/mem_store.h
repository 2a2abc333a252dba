// The store a feature suite runs on, chosen by the build (force-included:
// weave_add_store_suite in tests/CMakeLists.txt): mem://, in this process.
#pragma once

#include <string>

#define WEAVE_TEST_STORE_IS_MEM 1

inline std::string test_store_url() { return "mem://store-suite"; }
