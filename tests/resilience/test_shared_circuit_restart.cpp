// Shared circuit breakers across a Redis restart (a redis-server of the
// test's own): while the store is gone, each circuit_worker process decides
// on its own local breaker; once it is back, they follow the fleet's again.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"

using namespace std::chrono_literals;

TEST_CASE("shared circuit processes: with Redis down each process falls back on its local breaker, and follows the store again once it is back", "[redis]") {
  redis_test::RedisServer server;
  const std::string name = "restart";
  auto start = [&] {
    return std::make_unique<redis_test::Child>(
        std::vector<std::string>{WEAVE_CIRCUIT_WORKER, server.url(), name, "10000"});
  };
  auto a = start(), b = start();
  REQUIRE(a->line() == "READY closed");
  REQUIRE(b->line() == "READY closed");
  server.stop();
  std::this_thread::sleep_for(500ms);  // each notices (its feed drops; its reports fail)
  a->send("fail 20");  // A's own local breaker: 20 calls, all failed
  CHECK(a->line() == "CALLS 20 0");
  a->send("try");
  CHECK(a->line() == "REFUSED");  // opened by A's own failures
  b->send("try");
  CHECK(b->line() == "PASSED");  // B's local breaker saw none of them
  REQUIRE(server.start());
  a->send("await closed 10000");  // the store's record is new: closed, and A follows it again
  const auto back = a->line();
  REQUIRE(back);
  CHECK(back->rfind("STATE closed ", 0) == 0);
  a->send("try");
  CHECK(a->line() == "PASSED");
}
