// A feature suite on redis:// as a Redis ACL user that has exactly
// weave::redis_acl_rule() and nothing else (one redis-server for the
// executable on a free loopback port). The whole suite passing here is the
// proof that the rule is enough (store_under_test.h).
#include "store_under_test.h"

#include <sstream>
#include <stdexcept>
#include <vector>

#include "redis_server.h"
#include "weave/redis_acl.h"

namespace {
redis_test::RedisServer& acl_test_server() {
  static redis_test::RedisServer server;
  return server;
}
}  // namespace

// The default user: the operator, not the user under test.
std::string test_admin_url() { return acl_test_server().url(); }

std::string test_store_url() {
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
