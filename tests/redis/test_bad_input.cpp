// Bad input at the public API, against a private redis-server: odd keys,
// odd durations, a lock key of the wrong Redis type, SCRIPT FLUSH between
// calls, and a Redis user without permission. Each is either valid (and then
// leaves no lease behind) or a typed weave error; never a crash or a hang.
#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

#include "dedupe_methods.h"
#include "redis_server.h"
#include "weave/cache.h"
#include "weave/dedupe.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/queue.h"
#include "weave/redis_acl.h"

using namespace std::chrono_literals;
using redis_test::RedisServer;
using std::chrono::milliseconds;

namespace {

// `take` must fail with the server's refusal `code`: a ReplyError that names
// the lock key and says retrying will not help.
template <class F>
void check_refused(F&& take, const std::string& code, const std::string& key) {
  try {
    take();
    FAIL("no error; expected the server to refuse with " << code);
  } catch (const weave::ReplyError& e) {
    CHECK(e.code() == code);
    CHECK_FALSE(e.retryable());
    CHECK(e.key() == key);
    CHECK_THAT(e.what(), Catch::Contains(code) && Catch::Contains("'" + key + "'"));
  }
}

// Lease keys still in Redis (every lease name ends in '}'; counters in ':fence').
long long leases_left(RedisServer& server) {
  auto raw = server.client();
  long long n = 0;
  for (const auto& k : raw.cmd({"KEYS", "*"}).elements)
    if (!k.str.empty() && k.str.back() == '}') ++n;
  return n;
}

}  // namespace

TEST_CASE("bad input: empty, 1 MB and binary keys", "[redis][bad-input]") {
  RedisServer server;
  weave::LockClient locks(redis_test::lock_options(server.url()));

  CHECK_THROWS_AS(locks.acquire(""), weave::UsageError);
  CHECK_THROWS_AS(locks.try_acquire("", {.wait = 10ms}), weave::UsageError);

  const std::string big(1 << 20, 'x');
  const std::string binary("a\0b\xff\r\n}{ %s %n\x01", 16);
  for (const std::string& key : {big, binary, std::string("\0", 1), std::string("}")}) {
    auto h = locks.acquire(key, {.wait = 2s});
    REQUIRE(h);
    CHECK(h->key() == key);
    CHECK(h->fencing_token() > 0);
    CHECK(leases_left(server) == 1);
    // Another owner cannot take it.
    weave::LockClient other(redis_test::lock_options(server.url()));
    CHECK_FALSE(other.try_acquire(key));
    h.release();
    CHECK(leases_left(server) == 0);
  }
  // Keys that differ only after a NUL byte are different locks.
  auto a = locks.acquire(std::string("k\0a", 3));
  weave::LockClient other(redis_test::lock_options(server.url()));
  CHECK(other.try_acquire(std::string("k\0b", 3)));
}

TEST_CASE("bad input: zero, negative and overflowing durations", "[redis][bad-input]") {
  RedisServer server;
  weave::LockClient locks(redis_test::lock_options(server.url()));

  CHECK_THROWS_AS(locks.acquire("d", {.ttl = -1ms}), weave::UsageError);
  CHECK_THROWS_AS(locks.acquire("d", {.wait = -1ms}), weave::UsageError);
  CHECK_THROWS_AS(locks.acquire("d", {.ttl = milliseconds::max()}), weave::UsageError);
  CHECK_THROWS_AS(locks.acquire("d", {.ttl = milliseconds::min()}), weave::UsageError);
  CHECK_THROWS_AS(locks.acquire("d", {.wait = milliseconds::min()}), weave::UsageError);
  CHECK_THROWS_AS(locks.acquire("d", {.release = weave::LockSpec::Release::on_expiry}), weave::UsageError);
  CHECK(leases_left(server) == 0);

  {  // ttl 0 = watchdog mode; wait 0 = try once; wait = max counts as forever
    auto h = locks.acquire("d", {.ttl = 0ms, .wait = milliseconds::max()});
    REQUIRE(h);
    h.release();
  }
  {  // the shortest fixed ttl runs out at once; the lock is free again
    auto h = locks.acquire("d", {.ttl = 1ms});
    std::this_thread::sleep_for(50ms);
    weave::LockClient other(redis_test::lock_options(server.url()));
    CHECK(other.try_acquire("d"));
  }
  CHECK(leases_left(server) == 0);

  for (milliseconds lease : {0ms, -1ms, milliseconds::min()}) {
    auto o = redis_test::lock_options(server.url());
    o.watchdog_lease = lease;
    CHECK_THROWS_AS(weave::LockClient(o), weave::ConfigError);
  }
}

TEST_CASE("bad input: overflowing LockOptions durations", "[redis][bad-input]") {
  RedisServer server;
  // Was: accepted, then every acquire failed with IoError "invalid expire time"
  // from Redis (a huge renew_interval overflowed the watchdog's clock arithmetic).
  for (milliseconds lease : {milliseconds::max(), milliseconds(std::chrono::hours(24 * 365 * 11))}) {
    auto o = redis_test::lock_options(server.url());
    o.watchdog_lease = lease;
    CHECK_THROWS_AS(weave::LockClient(o), weave::ConfigError);
  }
  auto o = redis_test::lock_options(server.url());
  o.renew_interval = milliseconds::max();
  CHECK_THROWS_AS(weave::LockClient(o), weave::ConfigError);
  o.renew_interval = -5ms;  // <= 0 means the default (lease / 3)
  weave::LockClient locks(o);
  locks.acquire("huge").release();
  CHECK(leases_left(server) == 0);
}

TEST_CASE("bad input: every feature's options name the struct and the field, the store settings alike",
          "[redis][bad-input]") {
  // One check of what lock, cache and dedupe options share (src/core/option_check.h).
  auto message = [](auto&& configure) -> std::string {
    try {
      configure();
    } catch (const weave::ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK_THAT(message([] { weave::configure_locks({.url = "mem://", .pool_size = 0}); }),
             Catch::Contains("LockOptions::pool_size must be 1..1024, got 0"));
  CHECK_THAT(message([] { weave::configure_cache({.url = "mem://", .pool_size = 0}); }),
             Catch::Contains("CacheOptions::pool_size must be 1..1024, got 0"));
  CHECK_THAT(message([] { weave::configure_dedupe({.url = "mem://", .pool_size = 0}); }),
             Catch::Contains("DedupeOptions::pool_size must be 1..1024, got 0"));
  CHECK_THAT(message([] { weave::configure_cache({.url = "mem://", .command_timeout = 0ms}); }),
             Catch::Contains("CacheOptions::command_timeout must be > 0, got 0 ms"));
  CHECK_THAT(message([] { weave::configure_dedupe({.url = "mem://", .claim_lease = 10ms}); }),
             Catch::Contains("DedupeOptions::claim_lease must be at least 30 ms, got 10 ms"));
  CHECK_THAT(message([] { weave::configure_dedupe({.url = "mem://", .key_prefix = ""}); }),
             Catch::Contains("DedupeOptions::key_prefix must not be empty"));
  weave::configure_cache({});  // the defaults again, for the cases after this one
  weave::configure_dedupe({});
}

TEST_CASE("bad input: a lock key holding another Redis type", "[redis][bad-input]") {
  RedisServer server;
  auto raw = server.client();
  raw.cmd({"RPUSH", "{weave:lock:wrongtype}", "x"});
  raw.cmd({"HSET", "{weave:lock:wrongfence}:fence", "f", "v"});
  weave::LockClient locks(redis_test::lock_options(server.url()));
  check_refused([&] { locks.acquire("wrongtype"); }, "WRONGTYPE", "wrongtype");
  check_refused([&] { locks.acquire("wrongfence"); }, "WRONGTYPE", "wrongfence");
  // Several keys: the one refused is named, the one taken before it is given back.
  const std::string_view keys[] = {"a-fine-one", "wrongtype"};
  check_refused([&] { locks.acquire_all(keys); }, "WRONGTYPE", "wrongtype");
  CHECK(raw.cmd({"TYPE", "{weave:lock:wrongtype}"}).str == "list");  // left alone
  CHECK(leases_left(server) == 1);                                   // only the list
}

TEST_CASE("bad input: SCRIPT FLUSH between calls", "[redis][bad-input]") {
  RedisServer server;
  auto raw = server.client();
  weave::LockClient locks(redis_test::lock_options(server.url()));
  auto h = locks.acquire("f");
  raw.cmd({"SCRIPT", "FLUSH"});
  h.release();
  raw.cmd({"SCRIPT", "FLUSH"});
  auto h2 = locks.acquire("f");
  raw.cmd({"SCRIPT", "FLUSH"});
  CHECK(h2->fencing_token() > 0);
  h2.release();
  CHECK(leases_left(server) == 0);
}

TEST_CASE("bad input: a Redis user without permission", "[redis][bad-input]") {
  RedisServer server;
  auto raw = server.client();
  // May connect and PING, nothing else.
  raw.cmd({"ACL", "SETUSER", "weak", "on", ">secret", "~*", "&*", "-@all", "+ping", "+auth", "+select", "+hello"});
  const std::string base = "redis://weak:secret@127.0.0.1:" + std::to_string(server.port());
  weave::LockClient locks(redis_test::lock_options(base));
  check_refused([&] { locks.acquire("p"); }, "NOPERM", "p");
  check_refused([&] { locks.try_acquire("p"); }, "NOPERM", "p");  // no wait: the script itself is refused
  // Wrong password: refused at the handshake.
  weave::LockClient wrong(redis_test::lock_options("redis://weak:nope@127.0.0.1:" + std::to_string(server.port())));
  check_refused([&] { wrong.acquire("p"); }, "WRONGPASS", "p");
  CHECK(leases_left(server) == 0);
}

TEST_CASE("bad input: a server busy with a runaway script is a retryable refusal", "[redis][bad-input]") {
  RedisServer server;
  auto raw = server.client();
  raw.cmd({"CONFIG", "SET", "busy-reply-threshold", "50"});
  // A short lease: a release refused while the server is busy leaves the
  // lease to run out, which must happen within the final wait below.
  auto options = redis_test::lock_options(server.url());
  options.watchdog_lease = 1s;
  weave::LockClient locks(options);
  auto held = locks.acquire("held");
  // A read-only script that never ends (SCRIPT KILL can stop it).
  std::thread runaway([port = server.port()] {
    redis_test::Raw spinner(port, 10s);
    try {
      spinner.cmd({"EVAL", "while true do end", "0"});
    } catch (...) {
      // killed: the reply is an error
    }
  });
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    try {
      locks.try_acquire("b").release();
      std::this_thread::sleep_for(20ms);  // the script has not started (or not run long) yet
    } catch (const weave::ReplyError& e) {
      refused = true;
      CHECK(e.code() == "BUSY");
      CHECK(e.retryable());
      CHECK(e.key() == "b");
    }
  }
  CHECK(refused);
  // A release while the server is busy is refused too: counted, not thrown
  // (the default release_failure_policy).
  const auto failures = locks.stats().release_failures;
  held.release();
  CHECK(locks.stats().release_failures == failures + 1);
  raw.cmd({"SCRIPT", "KILL"});
  runaway.join();
  // Fine once the server is free again; a release refused while busy left
  // its lease to run out (the loop's own release may have been refused too).
  for (const char* key : {"held", "b"}) {
    auto h = locks.try_acquire(key, {.wait = 5s});
    CHECK(h);
    h.release();
  }
  CHECK(leases_left(server) == 0);
}

TEST_CASE("bad input: a [[dedupe]] store that is not there fails the claim with a retryable error naming the key",
          "[redis][bad-input]") {
  weave::DedupeOptions o;
  o.url = "redis://127.0.0.1:" + std::to_string(redis_test::free_port());  // nothing listens there
  o.connect_timeout = 200ms;
  weave::configure_dedupe(o);
  dedupe_test::Payments p;
  try {
    p.pay("order:nowhere");
    FAIL("no error; expected the claim to fail");
  } catch (const weave::IoError& e) {
    CHECK(e.retryable());
    CHECK(e.key() == "order:nowhere");
    CHECK_THAT(e.what(), Catch::Contains("(dedupe key 'order:nowhere')"));
  }
  CHECK(p.runs == 0);  // the method never ran unguarded
  weave::configure_dedupe({});
}

namespace {

// A Redis user with weave::redis_acl_rule() minus `without` (e.g. "+evalsha").
std::string user_without(RedisServer& server, const std::string& without) {
  std::vector<std::string> setuser{"ACL", "SETUSER", "lacking", "reset", "on", ">pw"};
  std::istringstream rule(weave::redis_acl_rule());
  for (std::string token; rule >> token;)
    if (token != without) setuser.push_back(token);
  REQUIRE(server.client().cmd(setuser).str == "OK");
  return "redis://lacking:pw@127.0.0.1:" + std::to_string(server.port());
}

}  // namespace

TEST_CASE("bad input: a Redis user lacking a command Weave needs gets an error naming it and the rule to add",
          "[redis][bad-input][acl]") {
  RedisServer server;
  SECTION("a command Weave sends: the server names it") {
    weave::LockOptions o;
    o.url = user_without(server, "+evalsha");
    weave::LockClient locks(o);
    try {
      (void)locks.try_acquire("acl:k");
      FAIL("acquired without EVALSHA");
    } catch (const weave::ReplyError& e) {
      CHECK(e.code() == "NOPERM");
      CHECK_FALSE(e.retryable());
      CHECK_THAT(e.what(), Catch::Contains("'evalsha'") && Catch::Contains("add +evalsha to its rule") &&
                               Catch::Contains(weave::redis_acl_rule()) && Catch::Contains("acl:k"));
    }
  }
  SECTION("a command a script runs: the script is named and the whole rule given") {
    weave::QueueOptions o;
    o.url = user_without(server, "+zadd");
    weave::configure_queues(o);
    weave::Queue q("acl-queue");
    try {
      q.offer_json(R"({"a":1})", std::chrono::milliseconds(0));
      FAIL("offered without ZADD");
    } catch (const weave::Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("queue offer") &&
                               Catch::Contains("one of the commands this script runs is not allowed") &&
                               Catch::Contains(weave::redis_acl_rule()));
    }
    weave::configure_queues({});
  }
}

namespace {
// A listener on a free loopback port that answers whatever it is sent with
// `reply` and closes: a peer speaking hostile RESP (not a Redis).
class HostilePeer {
 public:
  explicit HostilePeer(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    REQUIRE(::listen(fd_, 4) == 0);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[512];
      if (::read(c, buf, sizeof buf) > 0) (void)!::write(c, reply_.data(), reply_.size());
      ::shutdown(c, SHUT_WR);
      while (::read(c, buf, sizeof buf) > 0) {
      }
      ::close(c);
    });
  }
  ~HostilePeer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string reply_;
  int fd_ = -1, port_ = 0;
  std::thread thread_;
};
}  // namespace

// hiredis would allocate the element table as declared: 2,000,000,000
// pointers for a reply that then never comes.
TEST_CASE("bad input: a reply declaring a huge array is refused before anything is allocated for it",
          "[redis][bad-input]") {
  HostilePeer peer("*2000000000\r\n");
  try {
    weave::LockClient locks(redis_test::lock_options(peer.url()));
    locks.try_acquire("k");
    FAIL("a hostile reply was accepted");
  } catch (const weave::IoError& e) {
    CHECK_THAT(e.what(), Catch::Contains("declared 2000000000 elements, over the bound"));
  }
}
