// The fault-injecting proxy (tests/support/fault_proxy.h) against a real
// redis-server, with hiredis clients: what passes through it unchanged, and
// what each fault does (checked on the server directly, past the proxy).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fault_proxy.h"
#include "redis_server.h"

using namespace std::chrono_literals;
using fault_test::FaultProxy;
using fault_test::Match;
using redis_test::Raw;
using redis_test::RedisServer;
using Clock = std::chrono::steady_clock;

namespace {

// A reply as text, its type and content to the last byte (nested arrays
// included), so two replies compare as the bytes they came from.
std::string dump(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_INTEGER: return ":" + std::to_string(r->integer);
    case REDIS_REPLY_STATUS: return "+" + std::string(r->str, r->len);
    case REDIS_REPLY_ERROR: return "-" + std::string(r->str, r->len);
    case REDIS_REPLY_STRING: return "$" + std::to_string(r->len) + ":" + std::string(r->str, r->len);
    case REDIS_REPLY_ARRAY: {
      std::string out = "[";
      for (size_t i = 0; i < r->elements; ++i) out += (i ? "," : "") + dump(r->element[i]);
      return out + "]";
    }
  }
  return "?";
}

// Sends `args` on `c`; the reply dumped, or "io error: ..." when the
// connection failed (e.g. "io error: 3" for EOF, REDIS_ERR_EOF).
std::string call(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
  if (!r) return "io error: " + std::to_string(c->err) + " " + c->errstr;
  std::string out = dump(r);
  freeReplyObject(r);
  return out;
}

void append(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  REQUIRE(redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()) == REDIS_OK);
}

std::string next_reply(redisContext* c) {
  void* v = nullptr;
  if (redisGetReply(c, &v) != REDIS_OK || !v) return "io error: " + std::to_string(c->err);
  std::string out = dump(static_cast<redisReply*>(v));
  freeReplyObject(v);
  return out;
}

// Writes `bytes` on a plain socket to `port` and reads until `expect` bytes came (or 5 s).
std::string exchange_bytes(int port, const std::string& bytes, std::size_t expect) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())) {
    const auto deadline = Clock::now() + 5s;
    while (got.size() < expect && Clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) break;
      got.append(chunk, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return got;
}

long long ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

}  // namespace

TEST_CASE("fault proxy: replies of every type pass through unchanged", "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw direct(server.port()), via(proxy.port());
  direct.cmd({"RPUSH", "list", "a", "b\r\nc", std::string("\0\xff", 2)});
  const std::vector<std::vector<std::string>> commands = {
      {"PING"},
      {"SET", "k", "v"},
      {"GET", "k"},
      {"GET", "absent"},                                  // nil bulk
      {"INCR", "k"},                                      // error
      {"INCRBY", "n", "-42"},                             // integer
      {"LRANGE", "list", "0", "-1"},                      // array, binary elements
      {"EVAL", "return {1, {'a', {2, false}, {}}, 'b', redis.status_reply('ST')}", "0"},  // nested, nil, empty, status
      {"BLPOP", "absent", "0.01"},                        // nil array
      {"EVAL", "return redis.error_reply('MINE failed')", "0"},
  };
  for (const auto& c : commands) {
    INFO(c[0]);
    const std::string through = call(via.context(), c);
    CHECK(through.rfind("io error", 0) != 0);
    direct.cmd({"DEL", "n"});
    CHECK(through == call(direct.context(), c));
  }
  // Inline commands on a plain socket: the server's bytes come back as they were.
  CHECK(exchange_bytes(proxy.port(), "PING\r\nECHO  hello \r\n\r\nEXISTS k\n", 22) == "+PONG\r\n$5\r\nhello\r\n:1\r\n");
  CHECK(proxy.seen("echo") == 1);
}

TEST_CASE("fault proxy: a pipeline of 100 commands and a 1 MB value pass through", "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw direct(server.port()), via(proxy.port(), 10s);
  for (int i = 0; i < 100; ++i) {
    if (i % 2 == 0)
      append(via.context(), {"SET", "p:" + std::to_string(i), "v" + std::to_string(i)});
    else
      append(via.context(), {"GET", "p:" + std::to_string(i - 1)});
  }
  for (int i = 0; i < 100; ++i) {
    INFO("reply " << i);
    CHECK(next_reply(via.context()) == (i % 2 == 0 ? "+OK" : "$" + std::to_string(std::to_string(i - 1).size() + 1) +
                                                                   ":v" + std::to_string(i - 1)));
  }
  CHECK(proxy.seen("SET") == 50);
  CHECK(proxy.seen("GET") == 50);

  std::string big(1 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) % 251);  // \r\n and NULs too
  big.replace(1000, 4, "\r\n$5");
  CHECK(call(via.context(), {"SET", "big", big}) == "+OK");
  CHECK(direct.cmd({"GET", "big"}).str == big);
  CHECK(call(via.context(), {"GET", "big"}) == "$" + std::to_string(big.size()) + ":" + big);
  CHECK(proxy.seen(Match("SET", "big")) == 1);  // (the value is an argument too)
}

TEST_CASE("fault proxy: a delayed reply comes after the delay, the server has applied the write", "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw direct(server.port());
  proxy.delay_reply(Match("set", "late"), 1500ms);
  std::atomic<bool> answered{false};
  std::string reply, after;
  long long took = 0;
  std::thread client([&] {
    Raw via(proxy.port(), 10s);
    const auto start = Clock::now();
    append(via.context(), {"SET", "late", "v"});
    append(via.context(), {"GET", "late"});  // pipelined: its reply waits behind the held one
    reply = next_reply(via.context());
    took = ms_since(start);
    after = next_reply(via.context());
    answered = true;
  });
  redis_test::wait_for([&] { return direct.cmd({"GET", "late"}).str == "v"; }, "the write on the server");
  CHECK_FALSE(answered.load());  // applied, not answered yet
  client.join();
  CHECK(reply == "+OK");
  CHECK(after == "$1:v");
  CHECK(took >= 1500);
  CHECK(proxy.seen("SET") == 1);

  // The count: the next two GETs are late, the third is not.
  proxy.delay_reply("GET", 1000ms, 2);
  Raw via(proxy.port(), 10s);
  for (int i = 0; i < 3; ++i) {
    INFO("GET " << i);
    const auto start = Clock::now();
    CHECK(via.cmd({"GET", "late"}).str == "v");
    if (i < 2)
      CHECK(ms_since(start) >= 1000);
    else
      CHECK(ms_since(start) < 900);
  }
}

TEST_CASE("fault proxy: a cut after a request leaves the write applied, the client sees the connection closed",
          "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw direct(server.port());
  proxy.cut_after_request(Match("SET", "cut:"));
  {
    Raw via(proxy.port());
    CHECK(call(via.context(), {"SET", "before", "1"}) == "+OK");
    append(via.context(), {"SET", "cut:1", "v"});
    append(via.context(), {"SET", "after:1", "v"});  // sent after it: never forwarded
    CHECK(next_reply(via.context()) == "io error: " + std::to_string(REDIS_ERR_EOF));
  }
  CHECK(direct.cmd({"GET", "cut:1"}).str == "v");
  CHECK(direct.cmd({"EXISTS", "after:1"}).integer == 0);
  CHECK(proxy.seen(Match("SET", "cut:")) == 1);
  CHECK(proxy.seen(Match("SET", "after:")) == 0);
  // The rule was used up: the next connection and the next such request work.
  Raw via(proxy.port());
  CHECK(call(via.context(), {"SET", "cut:2", "w"}) == "+OK");
  CHECK(direct.cmd({"GET", "cut:2"}).str == "w");
}

TEST_CASE("fault proxy: a black hole makes a command time out, and what it kept goes on afterwards", "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw direct(server.port());
  {
    Raw via(proxy.port(), 300ms);
    CHECK(via.cmd({"PING"}).str == "PONG");
    proxy.black_hole(true);
    const auto start = Clock::now();
    CHECK_THROWS_WITH(via.cmd({"PING"}), Catch::Contains("redis command failed"));  // hiredis' read timeout
    CHECK(ms_since(start) >= 250);
  }
  // Bytes sent into the hole are kept, not forwarded, until it ends.
  std::string reply;
  std::thread client([&] {
    Raw via(proxy.port(), 10s);
    reply = call(via.context(), {"INCR", "n"});
  });
  std::this_thread::sleep_for(500ms);
  CHECK(proxy.seen("INCR") == 0);
  CHECK(direct.cmd({"GET", "n"}).nil());
  proxy.black_hole(false);
  client.join();
  CHECK(reply == ":1");
  CHECK(proxy.seen("INCR") == 1);
}

TEST_CASE("fault proxy: drop_connections closes every connection, new ones work", "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw direct(server.port());
  Raw a(proxy.port()), b(proxy.port());
  CHECK(call(a.context(), {"PING"}) == "+PONG");
  CHECK(call(b.context(), {"PING"}) == "+PONG");
  const auto clients = [&] {
    const std::string list = direct.cmd({"CLIENT", "LIST"}).str;
    return std::count(list.begin(), list.end(), '\n');
  };
  CHECK(clients() == 3);
  proxy.drop_connections();
  CHECK(call(a.context(), {"PING"}).rfind("io error", 0) == 0);
  CHECK(call(b.context(), {"PING"}).rfind("io error", 0) == 0);
  redis_test::wait_for([&] { return clients() == 1; }, "the upstream connections closed");
  Raw c(proxy.port());
  CHECK(call(c.context(), {"PING"}) == "+PONG");
}

TEST_CASE("fault proxy: seen counts forwarded requests by command, argument and predicate", "[redis]") {
  RedisServer server;
  FaultProxy proxy(server.port());
  Raw via(proxy.port());
  via.cmd({"SET", "order:1", "x"});
  via.cmd({"set", "order:2", "y"});
  via.cmd({"SET", "user:1", "order:"});  // the substring in the value counts too
  via.cmd({"GET", "order:1"});
  CHECK(proxy.seen("SET") == 3);
  CHECK(proxy.seen("Set") == 3);
  CHECK(proxy.seen(Match("SET", "order:")) == 3);
  CHECK(proxy.seen(Match("SET", "order:2")) == 1);
  CHECK(proxy.seen(Match("GET", "user:")) == 0);
  CHECK(proxy.seen(Match::where([](const fault_test::Argv& a) { return a.size() == 3 && a[2] == "y"; })) == 1);
  CHECK(proxy.seen(Match()) == 4);
}
