// The store a feature suite runs on (force-included: weave_add_store_suite):
// redis+cluster://, a private 3-master cluster for the executable
// (tests/cluster/cluster_fixture.h).
#pragma once

#include <string>

#include "cluster_fixture.h"
#include "raw_write.h"

#define WEAVE_TEST_STORE_IS_MEM 0

inline std::string test_store_url() { return cluster_test::Cluster::shared().url(); }
