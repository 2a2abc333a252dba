// The store a feature suite runs on (force-included: weave_add_store_suite):
// redis+sentinel://, a master, a replica and three sentinels for the
// executable (tests/sentinel/sentinel_fixture.h).
#pragma once

#include <string>

#include "raw_write.h"
#include "sentinel_fixture.h"

#define WEAVE_TEST_STORE_IS_MEM 0

inline std::string test_store_url() {
  static sentinel_test::Sentinels sentinels;
  return sentinels.url();
}
