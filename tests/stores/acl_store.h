// The store a feature suite runs on (force-included: weave_add_store_suite):
// redis:// as a Redis ACL user that has exactly weave::redis_acl_rule() and
// nothing else (one redis-server for the executable on a free loopback port).
// The whole suite passing here is the proof that the rule is enough.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#define WEAVE_TEST_STORE_HAS_ADMIN 1
#include "raw_write.h"
#include "redis_server.h"
#include "weave/redis_acl.h"

#define WEAVE_TEST_STORE_IS_MEM 0

inline redis_test::RedisServer& acl_test_server() {
  static redis_test::RedisServer server;
  return server;
}

inline std::string test_admin_url() { return acl_test_server().url(); }

inline std::string test_store_url() {
  static const std::string url = [] {
    redis_test::RedisServer& server = acl_test_server();
    std::vector<std::string> setuser{"ACL", "SETUSER", "weave", "reset", "on", ">weave-secret"};
    std::istringstream rule(weave::redis_acl_rule());
    for (std::string token; rule >> token;) setuser.push_back(token);
    const auto r = server.client().cmd(setuser);
    if (r.str != "OK") throw std::runtime_error("ACL SETUSER failed: " + r.str);
    return "redis://weave:weave-secret@127.0.0.1:" + std::to_string(server.port());
  }();
  return url;
}
