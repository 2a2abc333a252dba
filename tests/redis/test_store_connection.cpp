// The store's wire (src/store/connection.h) against a real redis-server:
// what a connection the server closed does to the next call.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "redis_server.h"
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
