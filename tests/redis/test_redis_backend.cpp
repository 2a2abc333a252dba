// The redis backend in one process: protocol, fencing, waiting without
// polling, the watchdog, and failures (server restarted, unreachable).
// Each test case starts its own redis-server on a free loopback port.
#include <catch2/catch.hpp>

#include <csignal>

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "lock/redis/backends.h"
#include "lock/redis/requests.h"
#include "redis_server.h"
#include "store/open.h"
#include "store/executor.h"
#include "weave/config.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"
#include "weave/redis.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using redis_test::RedisServer;
using std::chrono::milliseconds;

namespace {


milliseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

// Counts the calls each thread makes, forwarding to the real backend.
class CountingBackend : public weave::LockBackend {
 public:
  explicit CountingBackend(std::shared_ptr<weave::LockBackend> inner) : inner_(std::move(inner)) {}
  weave::AcquireResult acquire(const weave::AcquireRequest& r) override {
    ++tries();
    return inner_->acquire(r);
  }
  weave::ReleaseResult release(const weave::ReleaseRequest& r) override { return inner_->release(r); }
  std::vector<weave::RenewResult> renew_batch(std::span<const weave::RenewItem> items) override {
    renews_ += static_cast<int>(items.size());
    return inner_->renew_batch(items);
  }
  std::unique_ptr<weave::LockWaiter> prepare_wait(std::string_view k) override { return inner_->prepare_wait(k); }
  static int& tries() {
    thread_local int n = 0;
    return n;
  }
  std::atomic<int> renews_{0};

 private:
  std::shared_ptr<weave::LockBackend> inner_;
};

}  // namespace

TEST_CASE("redis: acquire, refresh by the same owner, busy for others, release", "[redis]") {
  RedisServer server;
  auto b = weave::make_redis_lock_backend(redis_test::lock_options(server.url()));
  auto raw = server.client();

  auto a1 = b->acquire({"order:1", "owner-a", 5000ms});
  REQUIRE(a1.acquired);
  CHECK(raw.cmd({"GET", "{weave:lock:order:1}"}).str == "owner-a");
  auto pttl = raw.cmd({"PTTL", "{weave:lock:order:1}"}).integer;
  CHECK(pttl > 0);
  CHECK(pttl <= 5000);

  auto again = b->acquire({"order:1", "owner-a", 8000ms});  // same owner: refresh, same token
  REQUIRE(again.acquired);
  CHECK(again.fencing_token == a1.fencing_token);
  CHECK(raw.cmd({"PTTL", "{weave:lock:order:1}"}).integer > 5000);

  auto busy = b->acquire({"order:1", "owner-b", 5000ms});
  CHECK_FALSE(busy.acquired);
  CHECK(busy.holder_ttl_left > 0ms);
  CHECK(busy.holder_ttl_left <= 8000ms);

  CHECK(b->release({"order:1", "owner-b"}) == weave::ReleaseResult::lost);  // never frees another's lock
  CHECK(raw.cmd({"GET", "{weave:lock:order:1}"}).str == "owner-a");
  CHECK(b->release({"order:1", "owner-a"}) == weave::ReleaseResult::released);
  CHECK(raw.cmd({"EXISTS", "{weave:lock:order:1}"}).integer == 0);
  // The same release again (a resend whose first answer was lost) answers as the first did.
  CHECK(b->release({"order:1", "owner-a"}) == weave::ReleaseResult::released);
  CHECK(raw.cmd({"GET", "{weave:lock:order:1}:released_by"}).str == "owner-a");

  auto b2 = b->acquire({"order:1", "owner-b", 5000ms});
  REQUIRE(b2.acquired);
  CHECK(b2.fencing_token > a1.fencing_token);
  // The fencing counter shares the lock key's hash tag and outlives the
  // lease by the grace (LockOptions::key_grace, 10 s).
  const long long counter_ttl = raw.cmd({"PTTL", "{weave:lock:order:1}:fence"}).integer;
  CHECK(counter_ttl > 5000);
  CHECK(counter_ttl <= 5000 + 10'000);
}

// A read release whose answer was lost is sent again (the store layer does
// when its reused connection closed): it answers as the first send did, and
// frees no other reader.
TEST_CASE("redis: a read release sent again answers as its first send and frees no other reader", "[redis]") {
  RedisServer server;
  auto b = weave::make_redis_lock_backend(redis_test::lock_options(server.url()));
  auto raw = server.client();
  using weave::LockType;
  REQUIRE(b->acquire({"report:1", "reader-a", 5000ms, LockType::read}).acquired);
  REQUIRE(b->acquire({"report:1", "reader-b", 5000ms, LockType::read}).acquired);
  CHECK(b->release({"report:1", "reader-a", LockType::read}) == weave::ReleaseResult::released);
  CHECK(b->release({"report:1", "reader-a", LockType::read}) == weave::ReleaseResult::released);
  CHECK(raw.cmd({"ZSCORE", "{weave:lock:report:1}:readers", "reader-b"}).str != "");  // B still reads
  CHECK(b->release({"report:1", "reader-c", LockType::read}) == weave::ReleaseResult::lost);  // never a reader
  CHECK(b->release({"report:1", "reader-b", LockType::read}) == weave::ReleaseResult::released);
  CHECK(b->release({"report:1", "reader-b", LockType::read}) == weave::ReleaseResult::released);
  // Kept the key grace (LockOptions::key_grace, 10 s), not longer.
  const long long kept = raw.cmd({"PTTL", "{weave:lock:report:1}:readers:released"}).integer;
  CHECK(kept > 0);
  CHECK(kept <= 10'000);
  // A reader whose lease ran out before it released answers lost, and so does its resend.
  REQUIRE(b->acquire({"report:2", "reader-d", 50ms, LockType::read}).acquired);
  std::this_thread::sleep_for(120ms);
  CHECK(b->release({"report:2", "reader-d", LockType::read}) == weave::ReleaseResult::lost);
  CHECK(b->release({"report:2", "reader-d", LockType::read}) == weave::ReleaseResult::lost);
}

TEST_CASE("redis: keys are binary-safe and namespaced by the key prefix", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto o = redis_test::lock_options(server.url());
  o.key_prefix = "app:";
  auto b = weave::make_redis_lock_backend(o);
  const std::string key("we\0ird} %s\r\n{key", 17);
  const std::string owner("own\0er", 6);
  REQUIRE(b->acquire({key, owner, 5000ms}).acquired);
  CHECK(raw.cmd({"GET", "{app:" + key + "}"}).str == owner);
  CHECK_FALSE(b->acquire({key, "other", 5000ms}).acquired);
  CHECK(b->acquire({std::string("we"), "other", 5000ms}).acquired);  // a prefix of it is another key
  CHECK(b->release({key, owner}) == weave::ReleaseResult::released);
}

TEST_CASE("redis: fencing tokens keep increasing across backends, script flushes and a restart", "[redis]") {
  RedisServer server;
  auto b1 = weave::make_redis_lock_backend(redis_test::lock_options(server.url()));
  auto b2 = weave::make_redis_lock_backend(redis_test::lock_options(server.url()));
  std::uint64_t last = 0;
  for (int i = 0; i < 20; ++i) {
    auto& b = i % 2 ? b1 : b2;
    auto r = b->acquire({"k", "o" + std::to_string(i), 5000ms});
    REQUIRE(r.acquired);
    CHECK(r.fencing_token > last);
    last = r.fencing_token;
    REQUIRE(b->release({"k", "o" + std::to_string(i)}) == weave::ReleaseResult::released);
    if (i == 10) server.client().cmd({"SCRIPT", "FLUSH"});  // NOSCRIPT -> EVAL fallback
  }
  server.restart();  // no persistence: the counter is gone; it restarts from the server's clock
  auto r = b1->acquire({"k", "after-restart", 5000ms});
  REQUIRE(r.acquired);
  CHECK(r.fencing_token > last);
}

TEST_CASE("redis: renew_batch renews only leases still owned, in one round trip", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto b = weave::make_redis_lock_backend(redis_test::lock_options(server.url()));
  std::vector<std::string> keys, owners;
  for (int i = 0; i < 600; ++i) {  // more than one script chunk
    keys.push_back("r:" + std::to_string(i));
    owners.push_back("o" + std::to_string(i));
    REQUIRE(b->acquire({keys.back(), owners.back(), 1000ms}).acquired);
  }
  REQUIRE(b->release({keys[5], owners[5]}) == weave::ReleaseResult::released);
  raw.cmd({"SET", "{weave:lock:" + keys[7] + "}", "someone-else", "PX", "5000"});
  std::vector<weave::RenewItem> items;
  for (int i = 0; i < 600; ++i) items.push_back({keys[i], owners[i], 60000ms});
  long long evalsha_before = raw.calls("evalsha");
  auto res = b->renew_batch(items);
  long long evalsha_after = raw.calls("evalsha");
  REQUIRE(res.size() == 600);
  for (int i = 0; i < 600; ++i) {
    INFO(i);
    CHECK(res[i] == (i == 5 || i == 7 ? weave::RenewResult::lost : weave::RenewResult::owned));
  }
  CHECK(evalsha_after - evalsha_before == 3);  // ceil(600 / 256) script calls, pipelined
  CHECK(raw.cmd({"PTTL", "{weave:lock:r:0}"}).integer > 1000);
  CHECK(raw.cmd({"EXISTS", "{weave:lock:" + keys[5] + "}"}).integer == 0);  // not recreated
  CHECK(raw.cmd({"GET", "{weave:lock:" + keys[7] + "}"}).str == "someone-else");
}

TEST_CASE("redis: URL with user, password and db does AUTH and SELECT", "[redis]") {
  RedisServer server({"--requirepass", "s3cret"});
  weave::LockClient locks(redis_test::lock_options(server.url() + "/3"));  // no password: refused
  try {
    locks.acquire("k");
    FAIL("acquired without the password");
  } catch (const weave::ReplyError& e) {  // retrying will not help
    CHECK(e.code() == "NOAUTH");
    CHECK_FALSE(e.retryable());
    CHECK(e.key() == "k");
  }
  std::string url = "redis://default:s3cret@127.0.0.1:" + std::to_string(server.port()) + "/3";
  weave::LockClient ok(redis_test::lock_options(url));
  auto h = ok.acquire("k", {.ttl = 5000ms});
  redis_test::Raw raw(server.port());
  raw.cmd({"AUTH", "s3cret"});
  raw.cmd({"SELECT", "3"});
  CHECK(raw.cmd({"GET", "{weave:lock:k}"}).str == h->owner_token());
  h.release();
}

TEST_CASE("redis: an unreachable server fails acquire with BackendUnavailable within the connect timeout",
          "[redis]") {
  SECTION("nothing listens on the port") {
    int port = redis_test::free_port();
    auto o = redis_test::lock_options("redis://127.0.0.1:" + std::to_string(port));
    o.connect_timeout = 500ms;
    weave::LockClient locks(o);
    auto t0 = Clock::now();
    CHECK_THROWS_AS(locks.acquire("k", {.wait = 2s}), weave::BackendUnavailable);
    CHECK(since(t0) < 500ms + 1500ms);
  }
  SECTION("a listener that never answers (accepts in the kernel, never replies)") {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    auto o = redis_test::lock_options("redis://127.0.0.1:" + std::to_string(ntohs(a.sin_port)));
    o.connect_timeout = 500ms;
    weave::LockClient locks(o);
    auto t0 = Clock::now();
    CHECK_THROWS_AS(locks.acquire("k"), weave::BackendUnavailable);
    auto took = since(t0);
    CHECK(took >= 400ms);
    CHECK(took < 500ms + 1500ms);
    ::close(fd);
  }
  SECTION("the server comes back: the next acquire reconnects") {
    RedisServer server;
    weave::LockClient locks(redis_test::lock_options(server.url()));
    locks.acquire("k", {.ttl = 1000ms}).release();
    server.stop();
    CHECK_THROWS_AS(locks.acquire("k", {.ttl = 1000ms}), weave::IoError);
    server.start();
    CHECK_NOTHROW(locks.acquire("k", {.ttl = 1000ms}).release());
  }
}

TEST_CASE("redis: a restart without persistence while a lease is held: the holder learns it lost it",
          "[redis]") {
  RedisServer server;
  std::atomic<int> lost_calls{0};
  auto o = redis_test::lock_options(server.url());
  o.watchdog_lease = 600ms;
  o.on_lost = [&](const weave::Lease&, std::string_view) { ++lost_calls; };
  weave::LockClient locks(o);
  auto h = locks.acquire("job");
  server.restart();
  auto deadline = Clock::now() + 10s;
  while (!h->stop_token().stop_requested() && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
  CHECK(h->stop_token().stop_requested());
  CHECK(h->lost());
  // on_lost follows the stop token on the notifier thread (the holder may
  // have noticed the lease's deadline pass before the watchdog did).
  for (int i = 0; i < 1000 && lost_calls == 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(lost_calls == 1);
  CHECK_THROWS_AS(h.release(), weave::LeaseLost);
  // And the key is free for others afterwards.
  CHECK(locks.try_acquire("job", {.ttl = 1000ms}));
}

TEST_CASE("redis: an unreachable server while held: the watchdog retries until the deadline, then the lease is lost",
          "[redis]") {
  RedisServer server;
  auto o = redis_test::lock_options(server.url());
  o.watchdog_lease = 900ms;  // renewed every 300 ms
  o.command_timeout = 150ms;
  o.connect_timeout = 150ms;
  weave::LockClient locks(o);

  SECTION("a pause shorter than the lease: renewals fail, a retry gets through, the lease survives") {
    auto h = locks.acquire("paused");
    std::this_thread::sleep_for(100ms);
    ::kill(server.pid(), SIGSTOP);  // the server stops answering; the connection stays up
    std::this_thread::sleep_for(400ms);  // a renewal falls into the pause
    ::kill(server.pid(), SIGCONT);
    std::this_thread::sleep_for(1500ms);  // well past the original deadline
    CHECK_FALSE(h->lost());
    CHECK_FALSE(h->stop_token().stop_requested());
    CHECK(server.client().cmd({"GET", "{weave:lock:paused}"}).str == h->owner_token());
    h.release();
  }
  SECTION("a pause past the lease's deadline: the lease is lost by then") {
    auto h = locks.acquire("paused");
    const auto acquired = Clock::now();
    ::kill(server.pid(), SIGSTOP);
    auto deadline = Clock::now() + 10s;
    while (!h->stop_token().stop_requested() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    const auto noticed = Clock::now() - acquired;
    ::kill(server.pid(), SIGCONT);
    CHECK(h->lost());
    // Declared lost once the last renewal's deadline passed: not before the
    // lease (900 ms), and not long after it (retries are bounded by timeouts).
    CHECK(noticed >= 800ms);
    CHECK(noticed < 900ms + 1500ms);
    CHECK_THROWS_AS(h.release(), weave::LeaseLost);
  }
}

TEST_CASE("redis: the watchdog keeps a lease for 10x its length, after release nothing renews", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto o = redis_test::lock_options(server.url());
  o.watchdog_lease = 300ms;
  weave::LockClient holder(o);
  weave::LockClient contender(redis_test::lock_options(server.url()));
  std::atomic<bool> done{false};
  std::atomic<int> contender_got_in{0};
  auto h = holder.acquire("wd");
  std::thread t([&] {
    while (!done) {
      if (contender.try_acquire("wd", {.ttl = 1000ms, .wait = 200ms})) ++contender_got_in;
    }
  });
  std::this_thread::sleep_for(3000ms);  // 10 x the lease
  done = true;
  t.join();
  CHECK(contender_got_in == 0);
  CHECK_FALSE(h->lost());
  CHECK_NOTHROW(h.release());
  CHECK(raw.cmd({"EXISTS", "{weave:lock:wd}"}).integer == 0);
  std::this_thread::sleep_for(300ms);  // let an in-flight tick finish
  long long before = raw.calls("evalsha") + raw.calls("eval");
  std::this_thread::sleep_for(1000ms);  // > 3 renew intervals
  long long after = raw.calls("evalsha") + raw.calls("eval");
  CHECK(after == before);
}

TEST_CASE("redis: 8 waiters on one key all get it one at a time, without polling", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  auto counting = std::make_shared<CountingBackend>(weave::make_redis_lock_backend(redis_test::lock_options(server.url())));
  weave::LockClient locks(redis_test::lock_options(server.url()), counting);
  weave::LockClient holder(redis_test::lock_options(server.url()));
  auto h = holder.acquire("hot");  // watchdog lease 30 s: waiters have no reason to wake before release

  constexpr int kWaiters = 8;
  std::atomic<int> inside{0}, max_inside{0}, started{0};
  std::mutex m;
  std::vector<int> order, tries(kWaiters);
  std::vector<std::thread> ts;
  for (int i = 0; i < kWaiters; ++i)
    ts.emplace_back([&, i] {
      ++started;
      auto w = locks.acquire("hot", {.wait = 60s});
      int now = ++inside;
      int prev = max_inside.load();
      while (now > prev && !max_inside.compare_exchange_weak(prev, now)) {
      }
      std::this_thread::sleep_for(20ms);
      --inside;
      {
        std::lock_guard g(m);
        order.push_back(i);
      }
      tries[i] = CountingBackend::tries();
      w.release();
    });
  while (started < kWaiters) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(500ms);  // everyone has tried once and is waiting
  const long long total_before = raw.total_commands();
  long long before = raw.calls("evalsha") + raw.calls("eval");
  long long subs_before = raw.calls("subscribe");
  std::this_thread::sleep_for(1500ms);  // waiting: no commands at all
  long long after = raw.calls("evalsha") + raw.calls("eval");
  const long long subs_after = raw.calls("subscribe");
  // Any command at all (a poll need not be a script: GET, PTTL, EXISTS, PING...)
  // besides the 1 + 6 INFO this test sent itself.
  const long long others = raw.total_commands() - total_before - 7;
  CHECK(after == before);
  CHECK(subs_after == subs_before);
  CHECK(others == 0);
  h.release();
  for (auto& t : ts) t.join();
  CHECK(order.size() == kWaiters);
  CHECK(max_inside == 1);
  // Each hand-off wakes the remaining waiters once (one PUBLISH): a waiter
  // tries at most once per hand-off it sat through, plus its first try and a
  // few spurious wake-ups, whatever the waiting time was.
  for (int i = 0; i < kWaiters; ++i) {
    INFO("waiter " << i << " tried " << tries[i] << " times");
    CHECK(tries[i] >= 1);
    CHECK(tries[i] <= kWaiters + 3);
  }
  // The whole run issued a bounded number of commands: 8 waiters x 9 tries + releases.
  CHECK(raw.calls("evalsha") + raw.calls("eval") - before <= kWaiters * (kWaiters + 3) + 2 * kWaiters);
}

TEST_CASE("redis: hand-off wakes a waiter on release, not at its deadline", "[redis]") {
  RedisServer server;
  weave::LockClient a(redis_test::lock_options(server.url())), b(redis_test::lock_options(server.url()));
  auto h = a.acquire("handoff");  // 30 s watchdog lease
  std::atomic<bool> got{false};
  Clock::time_point got_at;
  std::thread t([&] {
    auto w = b.acquire("handoff", {.wait = 20s});
    got_at = Clock::now();
    got = true;
  });
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(got);
  auto released_at = Clock::now();
  h.release();
  t.join();
  CHECK(got);
  CHECK(got_at - released_at < 5s);  // woken by the PUBLISH (generous: the wait was 20 s, the lease 30 s)
}

TEST_CASE("redis: chosen by WEAVE_LOCK_URL and by a JSON config file", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  SECTION("environment") {
    ::setenv("WEAVE_LOCK_URL", server.url().c_str(), 1);
    weave::LockOptions o = weave::load_lock_options();
    ::unsetenv("WEAVE_LOCK_URL");
    weave::LockClient locks(o);
    auto h = locks.acquire("env", {.ttl = 5000ms});
    CHECK(raw.cmd({"GET", "{weave:lock:env}"}).str == h->owner_token());
  }
  SECTION("JSON file") {
    std::string path = "/tmp/weave-redis-test-" + std::to_string(::getpid()) + ".json";
    {
      std::FILE* f = std::fopen(path.c_str(), "w");
      REQUIRE(f);
      std::fprintf(f, R"({"lock": {"url": "%s/2", "pool_size": 2, "connect_timeout": "300ms"}})", server.url().c_str());
      std::fclose(f);
    }
    weave::LockOptions o = weave::load_lock_options({.code = {}, .file = path, .environment = false});
    std::remove(path.c_str());
    CHECK(o.pool_size == 2);
    weave::LockClient locks(o);
    auto h = locks.acquire("json", {.ttl = 5000ms});
    raw.cmd({"SELECT", "2"});
    CHECK(raw.cmd({"GET", "{weave:lock:json}"}).str == h->owner_token());
  }
}

TEST_CASE("redis: waiters survive a server restart (the subscriber reconnects and resubscribes)", "[redis]") {
  RedisServer server;
  weave::LockClient a(redis_test::lock_options(server.url())), b(redis_test::lock_options(server.url()));
  auto h = a.acquire("sub", {.ttl = 30s});
  std::atomic<bool> got{false};
  std::thread t([&] {
    // Woken by the lost connection; retries until the restarted server answers.
    for (auto until = Clock::now() + 20s; !got && Clock::now() < until;) {
      try {
        if (b.try_acquire("sub", {.ttl = 30s, .wait = 10s})) got = true;
      } catch (const weave::IoError&) {
        std::this_thread::sleep_for(50ms);
      }
    }
  });
  std::this_thread::sleep_for(300ms);
  server.restart();  // the 30 s lease is gone with the data
  t.join();
  CHECK(got);
  // After the restart a second waiter is woken by a release again (resubscribed).
  auto h2 = a.acquire("sub2", {.ttl = 30s});
  std::atomic<bool> got2{false};
  std::thread t2([&] { got2 = static_cast<bool>(b.try_acquire("sub2", {.ttl = 30s, .wait = 20s})); });
  std::this_thread::sleep_for(300ms);
  auto released_at = Clock::now();
  h2.release();
  t2.join();
  CHECK(got2);
  CHECK(Clock::now() - released_at < 10s);
}

TEST_CASE("redis: an uncontended acquire is one command, its release is one command", "[redis]") {
  RedisServer server;
  auto raw = server.client();
  weave::LockClient locks(redis_test::lock_options(server.url()));
  for (int i = 0; i < 8; ++i) locks.acquire("warm-up", {.ttl = 5000ms}).release();  // pool connected, scripts loaded
  redis_test::Monitor monitor(server.port());
  for (const weave::LockSpec spec : {weave::LockSpec{.ttl = 5000ms}, weave::LockSpec{}}) {
    INFO("ttl " << spec.ttl.count() << " ms (0 = watchdog)");
    const auto m0 = monitor.mark();
    auto h = locks.acquire("one-trip", spec);
    const auto m1 = monitor.mark();
    h.release();
    const auto m2 = monitor.mark();
    CHECK(monitor.commands_between(m0, m1) == std::vector<std::string>{"evalsha"});
    CHECK(monitor.commands_between(m1, m2) == std::vector<std::string>{"evalsha"});
    CHECK(raw.cmd({"EXISTS", "{weave:lock:one-trip}"}).integer == 0);
  }
}

TEST_CASE("redis: pool_size caps the command connections, callers beyond it wait their turn", "[redis]") {
  RedisServer server;
  auto o = redis_test::lock_options(server.url());
  o.pool_size = 2;
  weave::LockClient locks(o);
  std::atomic<int> errors{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 150; ++i) {
          auto h = locks.try_acquire("pool:" + std::to_string(t) + ":" + std::to_string(i), {.ttl = 10s});
          if (!h) {  // fresh keys: never busy
            ++errors;
            continue;
          }
          h.release();
          ++done;
        }
      } catch (const std::exception&) {
        ++errors;
      }
    });
  // While they run, the server never sees more than 2 connections of ours.
  auto raw = server.client();
  long long most = 0;
  while (done < 8 * 150 && errors == 0) {
    const std::string list = raw.cmd({"CLIENT", "LIST"}).str;
    most = std::max<long long>(most, std::count(list.begin(), list.end(), '\n') - 1);  // minus this one
    std::this_thread::sleep_for(1ms);
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  CHECK(done == 8 * 150);
  CHECK(most >= 1);
  CHECK(most <= 2);
}

TEST_CASE("redis: a fork()ed child never frees the parent's lease and locks with its own connections and watchdog",
          "[redis]") {
  RedisServer server;
  auto o = redis_test::lock_options(server.url());
  o.watchdog_lease = 600ms;  // renewed every 200 ms
  weave::configure_locks(o);
  weave::LockClient before_fork = weave::default_lock_client();
  weave::LeaseHandle held = before_fork.acquire("fork:parent");  // watchdog mode
  // The library's threads are busy at the moment of the fork: a waiter
  // (subscriber thread, local gate) and the watchdog.
  std::thread waiter([&] {
    try {
      weave::LockClient(o).try_acquire("fork:parent", {.wait = 1500ms});
    } catch (...) {
    }
  });
  std::this_thread::sleep_for(100ms);

  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 0;
    try {
      { weave::LeaseHandle copy = std::move(held); }  // dropped in the child: must free nothing
      try {
        before_fork.try_acquire("fork:child-old");
        code |= 1;  // a client made before fork() must refuse
      } catch (const weave::UsageError&) {
      }
      weave::LeaseHandle mine = weave::default_lock_client().acquire("fork:child", {.wait = 2s});
      std::this_thread::sleep_for(1500ms);  // 2.5 leases: renewed by the child's own watchdog
      if (mine->lost()) code |= 2;
      mine.release();
    } catch (...) {
      code |= 4;
    }
    ::_exit(code);
  }
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  waiter.join();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // 1: old client locked, 2: child's lease lost, 4: an error
  CHECK_FALSE(held->lost());
  weave::LockClient other(o);
  CHECK_FALSE(other.try_acquire("fork:parent"));  // still the parent's
  held.release();
  CHECK(other.try_acquire("fork:child"));  // the child released its own
  weave::configure_locks(weave::LockOptions{});
}

// The store layer sends a request again when its connection closed before
// the reply: a forced unlock whose first send ran must not drop the lease of
// whoever took the key since (the request carries its id; the answer is kept).
TEST_CASE("redis: a forced unlock sent again answers as its first send and frees no lease taken since", "[redis]") {
  redis_test::RedisServer server;
  const weave::LockOptions o = redis_test::lock_options(server.url());
  auto exec = weave::store::open_executor(o.url, weave::store::connection_settings(o));
  auto backend = weave::lock_redis::make_script_backend(exec, o);
  const std::string key = "forced-again";
  REQUIRE(backend->acquire({key, "owner-A", 10s}).acquired);
  const weave::lock_redis::ForceReleaseCommand command(o.key_prefix, key,
                                                       weave::lock_redis::CounterPolicy::from(o, true));
  const weave::ForcedRelease first =
      weave::lock_redis::ForceReleaseCommand::parse(weave::store::run_one(*exec, command.call(), "test force"));
  REQUIRE(first.freed.size() == 1);
  REQUIRE(first.freed[0].owner == "owner-A");
  const weave::AcquireResult b = backend->acquire({key, "owner-B", 10s});
  REQUIRE(b.acquired);
  REQUIRE(b.fencing_token > first.fence);
  const weave::ForcedRelease again =  // the same request, sent again
      weave::lock_redis::ForceReleaseCommand::parse(weave::store::run_one(*exec, command.call(), "test force"));
  REQUIRE(again.freed.size() == 1);
  CHECK(again.freed[0].owner == "owner-A");
  CHECK(again.fence == first.fence);
  const weave::RenewItem b_lease{key, "owner-B", 10s};
  CHECK(backend->renew_batch({&b_lease, 1}) == std::vector{weave::RenewResult::owned});
  // A new forced unlock is a new request: it frees B.
  const weave::ForcedRelease next = backend->force_release(key);
  REQUIRE(next.freed.size() == 1);
  CHECK(next.freed[0].owner == "owner-B");
}
