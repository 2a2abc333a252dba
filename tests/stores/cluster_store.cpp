// A feature suite on redis+cluster://: a private 3-master cluster for the
// executable (tests/cluster/cluster_fixture.h; store_under_test.h).
#include "store_under_test.h"

#include "cluster_fixture.h"

std::string test_store_url() { return cluster_test::Cluster::shared().url(); }

std::string test_admin_url() { return test_store_url(); }
