// The lock suite on redlock://: 3 private masters (tests/redlock/masters.h),
// started on first use and killed at exit. Locks only: RedLock is not a
// store for the other features (store_under_test.h).
#include "store_under_test.h"

#include "masters.h"

std::string test_store_url() {
  static redlock_test::Masters masters(3);
  return masters.url();
}

std::string test_admin_url() { return test_store_url(); }
