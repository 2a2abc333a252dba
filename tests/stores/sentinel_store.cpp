// A feature suite on redis+sentinel://: a master, a replica and three
// sentinels for the executable (tests/sentinel/sentinel_fixture.h;
// store_under_test.h).
#include "store_under_test.h"

#include "sentinel_fixture.h"

std::string test_store_url() {
  static sentinel_test::Sentinels sentinels;
  return sentinels.url();
}

std::string test_admin_url() { return test_store_url(); }
