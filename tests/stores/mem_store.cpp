// A feature suite on mem://, in this process (store_under_test.h).
#define WEAVE_TEST_STORE_IS_MEM 1
#include "store_under_test.h"

std::string test_store_url() { return "mem://store-suite"; }
