// store::try_run_async (src/store/asio/async_run.h) and the links it uses
// (src/store/asio/direct_links.h): script calls sent and read from a coroutine's
// own io_context thread, against a real redis-server: the replies and errors
// run() gives, nothing sent when no connection is idle, a script loaded in
// the same round trip, the command timeout kept without blocking the thread,
// a script the server lost sent again, a connection that died while idle
// left to run(); one link per context reused by its calls, closed with the
// context or after its executor, several threads sharing them.
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "async/blocking_pool.h"
#include "redis_server.h"
#include "store/asio/async_run.h"
#include "store/open.h"
#include "weave/asio.h"
#include "weave/error.h"

namespace net = weave::net;
using namespace std::chrono_literals;
using redis_test::RedisServer;
using weave::store::Reply;
using weave::store::ScriptCall;

namespace {

const char kIncr[] = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
const char kRefuse[] = "return redis.error_reply('REFUSED by the test script')";

std::shared_ptr<weave::store::Executor> executor(const RedisServer& server, std::chrono::milliseconds timeout = 1s) {
  return weave::store::open_executor(server.url(), {.command_timeout = timeout, .pool_size = 2});
}

// try_run_async on an io_context run by this thread until it completes.
struct Outcome {
  bool completed = false;
  std::optional<std::vector<Reply>> replies;
  std::exception_ptr error;
  std::thread::id ran_on;
};
Outcome run_async(weave::store::Executor& exec, const std::vector<ScriptCall>& calls, net::io_context& io) {
  Outcome out;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        out.replies = co_await weave::store::try_run_async(exec, calls, "test call");
        out.ran_on = std::this_thread::get_id();
      },
      [&](std::exception_ptr e) {
        out.completed = true;
        out.error = e;
      });
  io.restart();
  io.run();
  return out;
}

long long integer(const Reply& r) {
  REQUIRE(r->type == REDIS_REPLY_INTEGER);
  return r->integer;
}

// A number of INFO <section> (connected_clients, total_connections_received).
long long info(redis_test::Raw& raw, const std::string& section, const std::string& field) {
  const std::string text = raw.cmd({"INFO", section}).str;
  const auto p = text.find(field + ":");
  if (p == std::string::npos) throw std::runtime_error("INFO " + section + ": no " + field);
  return std::stoll(text.substr(p + field.size() + 1));
}

}  // namespace

TEST_CASE("async store: calls on an idle connection are answered on the awaiting thread, as run() answers them",
          "[redis]") {
  RedisServer server;
  auto exec = executor(server);
  ScriptCall a{kIncr, {"counter:a"}, {"5"}}, b{kIncr, {"counter:b"}, {"7"}};
  const std::vector<ScriptCall> both{a, b};
  exec->run(both, "warm up");  // loads the script, leaves a connection idle
  net::io_context io;
  const Outcome out = run_async(*exec, both, io);
  REQUIRE(out.completed);
  REQUIRE_FALSE(out.error);
  REQUIRE(out.replies);
  REQUIRE(out.replies->size() == 2);
  CHECK(integer((*out.replies)[0]) == 10);
  CHECK(integer((*out.replies)[1]) == 14);
  CHECK(out.ran_on == std::this_thread::get_id());
  // The context kept the connection; run() opens another.
  CHECK(integer(exec->run({a}, "after").front()) == 15);
}

TEST_CASE("async store: a context's calls reuse its link, which goes back to the pool with the context", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = executor(server);
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:j"}, {"1"}}};
  exec->run(one, "warm up");  // one pooled connection, idle: the link's
  const long long clients = info(raw, "clients", "connected_clients");
  const long long opened = info(raw, "stats", "total_connections_received");
  {
    net::io_context io;
    for (int i = 2; i <= 21; ++i) {
      const Outcome out = run_async(*exec, one, io);
      REQUIRE(out.replies);
      CHECK(integer(out.replies->front()) == i);
    }
    CHECK(info(raw, "stats", "total_connections_received") == opened);  // 20 calls, no new connection
    CHECK(info(raw, "clients", "connected_clients") == clients);
  }
  // The context's end gave the link back to the pool, blocking: run() uses it, opens none.
  CHECK(integer(exec->run(one, "after").front()) == 22);
  CHECK(info(raw, "stats", "total_connections_received") == opened);
  CHECK(info(raw, "clients", "connected_clients") == clients);
}

TEST_CASE("async store: the links of a destroyed executor are closed by the context's next round trips", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:k"}, {"1"}}};
  net::io_context io;
  auto first = executor(server);
  first->run(one, "warm up");
  REQUIRE(run_async(*first, one, io).replies);  // a link of `first`, kept by `io`
  const long long clients = info(raw, "clients", "connected_clients");
  first.reset();
  auto second = executor(server);
  second->run(one, "warm up");
  REQUIRE(run_async(*second, one, io).replies);  // the sweep that watched it found `first` gone
  CHECK(integer(second->run(one, "after").front()) == 5);
  // Then: this client, `second`'s link and its pooled connection; `first`'s link closed.
  redis_test::wait_for([&] { return info(raw, "clients", "connected_clients") == clients + 1; }, "the old link closed");
}

TEST_CASE("async store: coroutines on four threads share the context's links, at most pool_size of them",
          "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = executor(server);  // pool_size 2
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:l"}, {"1"}}};
  exec->run(one, "warm up");
  net::io_context io;
  std::atomic<int> direct{0}, left{0}, failed{0};
  constexpr int kCoroutines = 400;
  for (int i = 0; i < kCoroutines; ++i)
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          for (int k = 0; k < 5; ++k) {
            auto r = co_await weave::store::try_run_async(*exec, one, "test call");
            if (!r)  // no link idle: as a caller does, run() where it may block
              r = exec->run(one, "fallback"), ++left;
            else
              ++direct;
          }
        },
        [&](std::exception_ptr e) {
          if (e) ++failed;
        });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&] { io.run(); });
  for (auto& t : threads) t.join();
  CHECK(failed == 0);
  CHECK(direct + left == kCoroutines * 5);
  CHECK(direct > 0);
  CHECK(std::stoll(raw.cmd({"GET", "counter:l"}).str) == 1 + kCoroutines * 5);  // every call ran once
  // Open now: this client, the context's links (at most pool_size: each was taken out of the pool,
  // which may open others in their place) and the pool's own (at most pool_size).
  INFO("direct " << direct << ", left to run() " << left);
  CHECK(info(raw, "clients", "connected_clients") <= 1 + 2 + 2);
}

TEST_CASE("async store: nothing is sent when no connection is idle", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = executor(server);
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:c"}, {"1"}}};
  net::io_context io;
  const Outcome fresh = run_async(*exec, one, io);  // no connection opened yet
  REQUIRE(fresh.completed);
  REQUIRE_FALSE(fresh.error);
  CHECK_FALSE(fresh.replies);
  CHECK(raw.calls("evalsha") == 0);
  CHECK(raw.calls("eval") == 0);
  CHECK(raw.cmd({"EXISTS", "counter:c"}).integer == 0);
}

TEST_CASE("async store: a script not loaded yet is loaded in the same round trip, then called by its SHA", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = executor(server);
  exec->command(weave::store::Command{"PING"}, "any", "warm up");  // a connection idle, no script loaded
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:g"}, {"3"}}};
  net::io_context io;
  const Outcome loaded = run_async(*exec, one, io);
  REQUIRE(loaded.completed);
  REQUIRE_FALSE(loaded.error);
  REQUIRE(loaded.replies);
  CHECK(integer(loaded.replies->front()) == 3);
  CHECK(raw.calls("eval") == 1);
  CHECK(raw.calls("evalsha") == 0);
  const Outcome by_sha = run_async(*exec, one, io);
  REQUIRE(by_sha.replies);
  CHECK(integer(by_sha.replies->front()) == 6);
  CHECK(raw.calls("eval") == 1);
  CHECK(raw.calls("evalsha") == 1);
}

TEST_CASE("async store: an error reply throws ReplyError naming the call", "[redis]") {
  RedisServer server;
  auto exec = executor(server);
  const std::vector<ScriptCall> refused{ScriptCall{kRefuse, {"any"}, {}}};
  CHECK_THROWS_AS(exec->run(refused, "warm up"), weave::ReplyError);
  net::io_context io;
  const Outcome out = run_async(*exec, refused, io);
  REQUIRE(out.completed);
  REQUIRE(out.error);
  try {
    std::rethrow_exception(out.error);
  } catch (const weave::ReplyError& e) {
    CHECK_THAT(e.what(), Catch::Contains("test call") && Catch::Contains("REFUSED by the test script"));
  }
}

TEST_CASE("async store: a script the server lost (SCRIPT FLUSH) goes again as EVAL on the same round trip", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = executor(server);
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:d"}, {"2"}}};
  exec->run(one, "warm up");
  raw.cmd({"SCRIPT", "FLUSH"});
  const long long evals = raw.calls("eval");
  net::io_context io;
  const Outcome out = run_async(*exec, one, io);
  REQUIRE(out.completed);
  REQUIRE_FALSE(out.error);
  REQUIRE(out.replies);
  CHECK(integer(out.replies->front()) == 4);
  CHECK(raw.calls("eval") == evals + 1);
}

TEST_CASE("async store: a stopped server times out after the command timeout without blocking the io_context",
          "[redis]") {
  RedisServer server;
  auto exec = executor(server, 300ms);
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:e"}, {"1"}}};
  exec->run(one, "warm up");
  ::kill(server.pid(), SIGSTOP);
  net::io_context io;
  // A timer on the same thread keeps ticking while the call waits.
  int ticks = 0;
  net::steady_timer tick(io);
  Outcome out;
  std::function<void()> arm = [&] {
    tick.expires_after(10ms);
    tick.async_wait([&](weave::net::error_code ec) {
      if (ec || out.completed) return;  // (a tick that expired as the call ended is not cancelled)
      ++ticks;
      arm();
    });
  };
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        out.replies = co_await weave::store::try_run_async(*exec, one, "test call");
      },
      [&](std::exception_ptr e) {
        out.completed = true;
        out.error = e;
        tick.cancel();
      });
  arm();
  io.run();
  ::kill(server.pid(), SIGCONT);
  REQUIRE(out.completed);
  REQUIRE(out.error);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), weave::TimeoutError);
  INFO("ticks while waiting: " << ticks);
  CHECK(ticks >= 5);  // ~30 in 300 ms; a blocked thread gives none
  // The timed-out connection was dropped: the next call works on a new one.
  CHECK(integer(exec->run(one, "after").front()) >= 2);
}

TEST_CASE("async store: a connection that died while idle leaves the calls to run(), which sends them once", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto exec = executor(server);
  const std::vector<ScriptCall> one{ScriptCall{kIncr, {"counter:f"}, {"1"}}};
  exec->run(one, "warm up");
  server.restart();  // the idle connection is dead now, the server empty
  net::io_context io;
  const Outcome out = run_async(*exec, one, io);
  REQUIRE(out.completed);
  REQUIRE_FALSE(out.error);
  CHECK_FALSE(out.replies);
  auto fresh = server.client();
  CHECK(fresh.cmd({"EXISTS", "counter:f"}).integer == 0);  // not run by the dead connection's write
  CHECK(integer(exec->run(one, "again").front()) == 1);
}

TEST_CASE("async store: a round trip whose coroutine is destroyed unfinished leaves no reply for the next caller",
          "[redis]") {
  RedisServer server;
  auto exec = executor(server, 5s);
  const std::vector<ScriptCall> first{ScriptCall{kIncr, {"counter:h"}, {"1"}}};
  exec->run(first, "warm up");  // one connection, idle, the script loaded
  ::kill(server.pid(), SIGSTOP);
  {
    net::io_context io;
    bool completed = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> { co_await weave::store::try_run_async(*exec, first, "test call"); },
        [&](std::exception_ptr) { completed = true; });
    io.run_for(100ms);  // written, its reply not read: the server is stopped
    REQUIRE_FALSE(completed);
  }  // the io_context and the suspended coroutine are destroyed here
  ::kill(server.pid(), SIGCONT);
  // The next caller gets its own reply, not the abandoned one's (2 for counter:h).
  const std::vector<ScriptCall> next{ScriptCall{kIncr, {"counter:i"}, {"100"}}};
  CHECK(integer(exec->run(next, "next").front()) == 100);
}

TEST_CASE("async store: destroying an io_context waits for its round trip on the store pool, which posts nothing after",
          "[redis]") {
  RedisServer server;
  auto exec = executor(server, 500ms);
  const std::vector<ScriptCall> call{ScriptCall{kIncr, {"counter:p"}, {"1"}}};
  exec->run(call, "warm up");
  ::kill(server.pid(), SIGSTOP);
  std::atomic<bool> job_ended{false};
  {
    net::io_context io;
    bool completed = false;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          co_await weave::detail::run_on(weave::detail::store_pool(), [&] {
            try {
              exec->run(call, "pool call");  // the server is stopped: ends with its command timeout
            } catch (const weave::Error&) {
            }
            job_ended = true;
          });
        },
        [&](std::exception_ptr) { completed = true; });
    io.run_for(100ms);
    REQUIRE_FALSE(completed);
  }  // the round trip still runs on the pool: the destruction waits for it
  CHECK(job_ended);
  ::kill(server.pid(), SIGCONT);
}
