// A feature suite on redis://: one redis-server for the executable on a free
// loopback port, started on first use and killed at exit (store_under_test.h).
#include "store_under_test.h"

#include "redis_server.h"

std::string test_store_url() {
  static redis_test::RedisServer server;
  return server.url();
}

std::string test_admin_url() { return test_store_url(); }
