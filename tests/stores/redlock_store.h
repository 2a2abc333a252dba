// The store a suite runs on (force-included: weave_add_store_suite): redlock://
// over 3 private masters (tests/redlock/masters.h), started on first use and
// killed at exit. Locks only: RedLock is not a store for the other features.
#pragma once

#include <string>

#include "masters.h"

#define WEAVE_TEST_STORE_IS_MEM 0

inline std::string test_store_url() {
  static redlock_test::Masters masters(3);
  return masters.url();
}
