// The cache suite (test_cache.cpp) on redis+cluster://: a private 3-master
// cluster for the executable (tests/cluster/cluster_fixture.h).
#pragma once

#include <string>

#include "cluster_fixture.h"
#include "store_raw.h"

inline std::string cache_store_url() { return cluster_test::Cluster::shared().url(); }

inline void store_raw_json(const std::string& name, const std::string& key, const std::string& json) {
  store_raw_entry(cache_store_url(), name, key, json);
}
