// Force-included (-include) into tests/lock/test_conformance.cpp for the
// test_cluster_conformance executable: the lock conformance suite against
// redis+cluster:// on a private 3-master cluster (started by the first
// available(), killed at exit).
#pragma once

#include <chrono>
#include <string>

#include "cluster_fixture.h"
#include "weave/lock.h"

namespace cluster_test {

struct ConformanceCluster {
  static inline std::string url = "redis+cluster://(not started)";
  static constexpr int increments = 500;
  static void tune(weave::LockOptions& o) { o.command_timeout = std::chrono::seconds(5); }
  static bool available() {
    static bool ok = [] {
      try {
        url = Cluster::shared().url();
        return true;
      } catch (const std::exception&) {
        return false;
      }
    }();
    return ok;
  }
};

}  // namespace cluster_test

#define WEAVE_LOCK_TEST_BACKENDS cluster_test::ConformanceCluster
