// The store's wire (src/store/connection.h, blocking_pop.h) against a real
// redis-server: what a connection the server closed does to the next call,
// and a thread's blocking pops.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis_server.h"
#include "store/executor.h"
#include "store/open.h"
#include "weave/error.h"

using namespace std::chrono_literals;
using redis_test::RedisServer;
using weave::store::Command;

TEST_CASE("store connection: a long write on a connection the server closed never raises SIGPIPE", "[redis]") {
  // The server answers the write's first bytes with a reset, and hiredis'
  // write() of the rest raised SIGPIPE, whose default action ended this
  // process (exit 141) before the call could fail or be sent again.
  RedisServer server;
  auto raw = server.client();
  auto exec = weave::store::open_executor(server.url(), {.command_timeout = 10s, .pool_size = 1});
  exec->command(Command{"PING"}, "big", "warm up");  // one pooled connection, idle
  raw.cmd({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  redis_test::wait_for([&] { return raw.cmd({"CLIENT", "LIST"}).str.find("cmd=ping") == std::string::npos; },
                       "the pooled connection closed");
  const std::string big(32 << 20, 'x');
  // The reused connection fails closed while it idled: the call is sent once
  // more on a new one (NodeExecutor::command), which works.
  const weave::store::Reply reply = exec->command(Command{"SET", "big", big}, "big", "a long write");
  CHECK(std::string(reply->str, reply->len) == "OK");
  CHECK(raw.cmd({"STRLEN", "big"}).integer == static_cast<long long>(big.size()));
}

TEST_CASE("store blocking pop: it returns what is pushed, stays pending past a deadline, and a pending one given up "
          "closes its connection", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = weave::store::open_executor(server.url(), {});
  auto blpop_clients = [&] {
    const std::string list = raw.cmd({"CLIENT", "LIST"}).str;
    int n = 0;
    for (std::size_t at = 0; (at = list.find("cmd=blpop", at)) != std::string::npos; ++at) ++n;
    return n;
  };
  {
    std::unique_ptr<weave::store::BlockingPop> pop = exec->blocking_pop("{inbox}:a");
    REQUIRE(pop);
    raw.cmd({"RPUSH", "{inbox}:a", "first"});  // pushed before the pop: kept in the list
    CHECK(pop->pop_until(std::chrono::steady_clock::now() + 5s) == std::optional<std::string>("first"));
    const auto asked = std::chrono::steady_clock::now();
    CHECK_FALSE(pop->pop_until(asked + 50ms));  // nothing: back at the deadline, the pop still pending
    CHECK(std::chrono::steady_clock::now() - asked < 1s);
    CHECK(blpop_clients() == 1);
    raw.cmd({"RPUSH", "{inbox}:a", "second"});
    CHECK(pop->pop_until(std::chrono::steady_clock::now() + 5s) == std::optional<std::string>("second"));
    CHECK_FALSE(pop->pop_until(std::chrono::steady_clock::now() + 10ms));
  }
  // Given up pending: its connection is closed, so nothing pushed later is
  // popped into a connection nobody reads.
  redis_test::wait_for([&] { return blpop_clients() == 0; }, "the pending pop's connection closed");
  raw.cmd({"RPUSH", "{inbox}:a", "third"});
  CHECK(raw.cmd({"LLEN", "{inbox}:a"}).integer == 1);
  // A pop that ended with its element leaves a connection the next one reuses.
  {
    std::unique_ptr<weave::store::BlockingPop> pop = exec->blocking_pop("{inbox}:a");
    REQUIRE(pop);
    CHECK(pop->pop_until(std::chrono::steady_clock::now() + 5s) == std::optional<std::string>("third"));
  }
  // At most kWaitingConnections at once per node: then none, never a wait.
  std::vector<std::unique_ptr<weave::store::BlockingPop>> held;
  for (int i = 0; i < weave::store::kWaitingConnections; ++i) {
    held.push_back(exec->blocking_pop("{inbox}:b"));
    REQUIRE(held.back());
  }
  CHECK_FALSE(exec->blocking_pop("{inbox}:b"));
  held.pop_back();
  CHECK(exec->blocking_pop("{inbox}:b"));
}

TEST_CASE("store blocking pop: a connection the server cuts mid-pop is an IoError", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = weave::store::open_executor(server.url(), {});
  std::unique_ptr<weave::store::BlockingPop> pop = exec->blocking_pop("{inbox}:c");
  REQUIRE(pop);
  CHECK_FALSE(pop->pop_until(std::chrono::steady_clock::now() + 20ms));  // pending
  raw.cmd({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  CHECK_THROWS_AS(pop->pop_until(std::chrono::steady_clock::now() + 5s), weave::IoError);
}
