// N independent redis-server masters on free loopback ports, and the
// redlock:// URL naming them. Killed when the object goes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "redis_server.h"

namespace redlock_test {

struct Masters {
  explicit Masters(int n) {
    for (int i = 0; i < n; ++i) servers.push_back(std::make_unique<redis_test::RedisServer>());
  }
  std::string url() const {
    std::string u = "redlock://";
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (i) u += ',';
      u += "127.0.0.1:" + std::to_string(servers[i]->port());
    }
    return u;
  }
  redis_test::RedisServer& operator[](std::size_t i) { return *servers[i]; }
  std::size_t size() const { return servers.size(); }
  std::vector<std::unique_ptr<redis_test::RedisServer>> servers;
};

}  // namespace redlock_test
