// What a lock leaves in Redis, and for how long: after a lock's last lease
// is released or runs out, every key Weave made for it (fencing counter, fair
// line, readers, writers) is gone once the grace (LockOptions::key_grace)
// has passed, on every Redis backend; and fencing tokens keep increasing
// across the counter's expiry, a counter that went back and a restart without
// persistence. Each test starts its own servers (a cluster, sentinels,
// redlock masters) on free loopback ports. See docs/redis.md, "Keys and their
// lifetimes".
//
// The [lifetime] cases lock 10,000 keys per lock type with a 300 ms grace;
// test_key_lifetime_soak (label soak) runs them again with
// WEAVE_KEY_LIFETIME_SOAK set: 100,000 keys per lock type, the default
// 10 s grace.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.h"
#include "masters.h"
#include "redis_server.h"
#include "sentinel_fixture.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"
#include "weave/redis.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using redis_test::RedisServer;
using std::chrono::milliseconds;
using weave::LockType;

// The soak run (WEAVE_KEY_LIFETIME_SOAK set: test_key_lifetime_soak) locks
// more keys and keeps the default grace.
const bool kSoak = std::getenv("WEAVE_KEY_LIFETIME_SOAK") != nullptr;
const int kKeys = kSoak ? 100'000 : 10'000;
const milliseconds kGrace = kSoak ? weave::LockOptions{}.key_grace : 300ms;

namespace {

const std::vector<LockType> kAllTypes = {LockType::reentrant, LockType::fair, LockType::read, LockType::write};

weave::LockOptions options(const std::string& url) {
  weave::LockOptions o = redis_test::lock_options(url);
  o.key_grace = kGrace;
  o.command_timeout = 5s;  // a loaded 2-core CI machine
  o.pool_size = 8;
  o.watchdog_lease = 600ms;  // renewed every 200 ms
  o.queue_entry = 300ms;     // a place in line of a waiter that crashed lasts this long
  return o;
}

std::string counter_of(const std::string& key) { return "{weave:lock:" + key + "}:fence"; }

std::string name_of(LockType t) { return std::string(weave::to_string(t)); }

long long dbsize(RedisServer& node) { return node.client().cmd({"DBSIZE"}).integer; }

// The longest PTTL of `redis_key` over the nodes (-2: on none of them; a
// cluster node that does not serve its slot answers MOVED).
long long pttl_anywhere(const std::vector<RedisServer*>& nodes, const std::string& redis_key) {
  long long best = -2;
  for (RedisServer* n : nodes) {
    try {
      best = std::max(best, n->client().cmd({"PTTL", redis_key}).integer);
    } catch (const std::runtime_error&) {
    }
  }
  return best;
}

// Locks and releases `count` distinct keys of `type`, from 8 threads at once.
// Each lease is fixed at 60 s and released at once: the release, not the
// lease's end, must start the grace.
void churn(const weave::LockClient& locks, LockType type, const std::string& name, int count) {
  constexpr int kThreads = 8;
  std::vector<std::future<void>> done;
  for (int t = 0; t < kThreads; ++t)
    done.push_back(std::async(std::launch::async, [&locks, type, name, count, t] {
      weave::LockClient mine = locks;
      for (int i = t; i < count; i += kThreads) {
        auto h = mine.acquire(name + ":" + std::to_string(i), {.ttl = 60s, .type = type});
        h.release();
      }
    }));
  for (auto& d : done) d.get();
}

// The other ways a lock's keys come and go, a few keys each: leases left to
// run out, leases renewed by the watchdog, several readers at once, and for
// fair, write and reentrant (starving waiters) a line of waiters (one served,
// one giving up, one that crashed and never refreshes its place).
void other_lifetimes(const weave::LockClient& locks, LockType type, const std::string& name) {
  weave::LockClient locks2 = locks;
  for (int i = 0; i < 10; ++i)
    locks2.acquire(name + ":expires:" + std::to_string(i),
                   {.ttl = 200ms, .release = weave::LockSpec::Release::on_expiry, .type = type})
        .release();
  std::vector<weave::LeaseHandle> renewed;
  for (int i = 0; i < 10; ++i) renewed.push_back(locks2.acquire(name + ":renewed:" + std::to_string(i), {.type = type}));
  std::this_thread::sleep_for(900ms);  // 1.5 leases: renewed (counter included) at least once
  for (auto& h : renewed) {
    CHECK_FALSE(h->lost());
    h.release();
  }
  if (type == LockType::read) {
    const std::string key = name + ":readers";
    auto a = locks2.acquire(key, {.ttl = 60s, .type = type});
    locks2.acquire(key, {.ttl = 200ms, .release = weave::LockSpec::Release::on_expiry, .type = type}).release();
    auto c = locks2.acquire(key, {.ttl = 60s, .type = type});
    a.release();
    c.release();
  }
  if (type == LockType::fair || type == LockType::write) {
    const std::string key = name + ":line";
    auto h = locks2.acquire(key, {.ttl = 60s, .type = type});
    // A waiter that crashed: its place in line (300 ms) is never refreshed.
    REQUIRE_FALSE(locks2.backend().acquire({key, "crashed-waiter", 60s, type, 300ms}).acquired);
    weave::LockClient other(locks2.options());
    CHECK_FALSE(other.try_acquire(key, {.ttl = 60s, .wait = 100ms, .type = type}));  // gives up, leaves the line
    auto served = std::async(std::launch::async, [&] {
      other.acquire(key, {.ttl = 60s, .wait = 10s, .type = type}).release();
    });
    std::this_thread::sleep_for(100ms);
    h.release();
    served.get();
  }
  if (type == LockType::reentrant) {  // the line of starving waiters (docs/redis.md, "Contention")
    const std::string key = name + ":starving";
    auto h = locks2.acquire(key, {.ttl = 60s, .type = type});
    // A starving waiter that crashed: first in line, its turn comes and goes.
    weave::AcquireRequest crashed{key, "crashed-waiter", 60s, type};
    crashed.handoff_turn = locks2.options().handoff_turn;
    crashed.starving = true;
    REQUIRE_FALSE(locks2.backend().acquire(crashed).acquired);
    weave::LockClient other(locks2.options());
    CHECK_FALSE(other.try_acquire(key, {.ttl = 60s, .wait = 100ms, .type = type}));  // starves, gives up, leaves
    auto served = std::async(std::launch::async, [&] {
      other.acquire(key, {.ttl = 60s, .wait = 10s, .type = type}).release();
    });
    std::this_thread::sleep_for(100ms);  // queued behind the crashed one
    h.release();
    served.get();
    // Only a crashed waiter in line, and nobody comes after the release: its
    // place (and the line's keys) end with its turn, not the 60 s lease.
    const std::string alone = name + ":starving-alone";
    auto last = locks2.acquire(alone, {.ttl = 60s, .type = type});
    crashed.key = alone;
    REQUIRE_FALSE(locks2.backend().acquire(crashed).acquired);
    last.release();
  }
}

// Every key of every lock gone from every node, or a failure that lists what
// is left. Returns how long it took.
milliseconds wait_until_back(const std::vector<RedisServer*>& nodes, const std::vector<long long>& baseline) {
  const auto start = Clock::now();
  const auto deadline = start + kGrace + 20s;  // generous: DBSIZE counts expired keys until Redis reclaims them
  for (;;) {
    bool back = true;
    for (std::size_t i = 0; i < nodes.size(); ++i) back = back && dbsize(*nodes[i]) == baseline[i];
    if (back) return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    if (Clock::now() > deadline) break;
    std::this_thread::sleep_for(50ms);
  }
  std::string left;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto raw = nodes[i]->client();
    left += "node " + std::to_string(i) + ": DBSIZE " + std::to_string(dbsize(*nodes[i])) + " (was " +
            std::to_string(baseline[i]) + ")";
    auto keys = raw.cmd({"SCAN", "0", "COUNT", "1000"}).elements.at(1).elements;
    for (std::size_t k = 0; k < keys.size() && k < 5; ++k)
      left += ", " + keys[k].str + " (pttl " + std::to_string(raw.cmd({"PTTL", keys[k].str}).integer) + ")";
    left += "\n";
  }
  FAIL("keys left " << std::chrono::duration_cast<milliseconds>(kGrace + 20s).count() << " ms after the last release:\n"
                    << left);
  return {};
}

// The scenario every backend runs: `kKeys` keys of each type locked and
// released, the other lifetimes, then DBSIZE back to the baseline on every
// node; the tokens of a few keys taken before are exceeded after their
// counters expired.
void leaves_nothing(const std::string& url, const std::vector<RedisServer*>& nodes, const std::vector<LockType>& types,
                    const std::function<void(const weave::LockClient&)>& extra = {}) {
  std::vector<long long> baseline;
  for (RedisServer* n : nodes) baseline.push_back(dbsize(*n));
  weave::LockClient locks(options(url));

  // A token of each type before, and the grace honoured: right after the
  // release the counter is there, for at most the grace.
  std::vector<std::uint64_t> before;
  for (LockType type : types) {
    const std::string key = "life:token:" + name_of(type);
    auto h = locks.acquire(key, {.ttl = 60s, .type = type});
    before.push_back(h->fencing_token());
    h.release();
    const long long pttl = pttl_anywhere(nodes, counter_of(key));
    INFO(name_of(type) << ": counter pttl " << pttl << " ms right after the release");
    CHECK(pttl > 0);
    CHECK(pttl <= kGrace.count());
  }

  const auto start = Clock::now();
  for (LockType type : types) {
    const std::string name = "life:" + name_of(type);
    churn(locks, type, name, kKeys);
    other_lifetimes(locks, type, name);
  }
  if (extra) extra(locks);
  const auto churned = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  const milliseconds took = wait_until_back(nodes, baseline);
  WARN(url.substr(0, url.find("://")) << ": " << kKeys << " keys x " << types.size() << " types locked and released in "
                                      << churned.count() << " ms; every key gone " << took.count()
                                      << " ms later (grace " << kGrace.count() << " ms)");

  // The counters are gone: new ones still hand out larger tokens.
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string key = "life:token:" + name_of(types[i]);
    REQUIRE(pttl_anywhere(nodes, counter_of(key)) == -2);
    auto h = locks.acquire(key, {.ttl = 60s, .type = types[i]});
    INFO(name_of(types[i]) << ": token " << before[i] << " before the counter expired, " << h->fencing_token()
                           << " after");
    CHECK(h->fencing_token() > before[i]);
  }
}

}  // namespace

TEST_CASE("keys: no key of any lock type is left the grace after the release on redis://",
          "[redis][keys][lifetime]") {
  RedisServer server;
  leaves_nothing(server.url(), {&server}, kAllTypes);
}

TEST_CASE("keys: no key of any lock type is left the grace after the release on redis+cluster://",
          "[redis][keys][cluster][lifetime]") {
  cluster_test::Cluster cluster;
  std::vector<RedisServer*> nodes;
  for (std::size_t i = 0; i < cluster.size(); ++i) nodes.push_back(&cluster.node(i));
  leaves_nothing(cluster.url(), nodes, kAllTypes);
}

TEST_CASE("keys: no key of any lock type is left the grace after the release on redis+sentinel://",
          "[redis][keys][sentinel][lifetime]") {
  sentinel_test::Sentinels sentinels;
  leaves_nothing(sentinels.url(), {&sentinels.node(0), &sentinels.node(1)}, kAllTypes);  // master and replica
}

TEST_CASE("keys: no key of a lock is left the grace after the release on redlock://",
          "[redis][keys][lifetime][redlock]") {
  redlock_test::Masters masters(3);
  std::vector<RedisServer*> nodes;
  for (auto& m : masters.servers) nodes.push_back(m.get());
  leaves_nothing(masters.url(), nodes, {LockType::reentrant}, [&](const weave::LockClient& locks) {
    // Counters that diverged are raised to the token handed out: the raised
    // ones keep their expiry.
    weave::LockClient mine = locks;
    const std::string key = "life:raised";
    mine.acquire(key, {.ttl = 60s}).release();
    masters[0].client().cmd({"INCRBY", counter_of(key), "1000000000"});
    auto h = mine.acquire(key, {.ttl = 60s});
    for (auto& m : masters.servers) CHECK(m->client().cmd({"GET", counter_of(key)}).str == std::to_string(h->fencing_token()));
    h.release();
  });
}


TEST_CASE("keys: a counter that went back still hands out larger tokens (a replica promoted before it got the last "
          "increments)",
          "[redis][keys]") {
  RedisServer server;
  weave::LockClient locks(options(server.url()));
  auto raw = server.client();
  for (LockType type : kAllTypes) {
    INFO(name_of(type));
    const std::string key = "stale:" + name_of(type);
    std::vector<std::uint64_t> tokens;
    for (int i = 0; i < 5; ++i) {
      auto h = locks.acquire(key, {.ttl = 60s, .type = type});
      tokens.push_back(h->fencing_token());
      h.release();
    }
    // What a replica that missed the last four increments holds when it is promoted.
    raw.cmd({"SET", counter_of(key), std::to_string(tokens.front()), "KEEPTTL"});
    auto h = locks.acquire(key, {.ttl = 60s, .type = type});
    CHECK(h->fencing_token() > tokens.back());
  }
}

TEST_CASE("keys: a counter lives as long as its lease (renewals included) so a refresh returns the lease's own token",
          "[redis][keys]") {
  RedisServer server;
  weave::LockClient locks(options(server.url()));  // watchdog lease 600 ms, grace 300 ms
  auto raw = server.client();
  std::vector<weave::LeaseHandle> held;
  for (LockType type : kAllTypes) held.push_back(locks.acquire("renewed:" + name_of(type), {.type = type}));
  std::this_thread::sleep_for(1500ms);  // 2.5 leases, 5 grace periods: the watchdog renewed them
  for (std::size_t i = 0; i < kAllTypes.size(); ++i) {
    INFO(name_of(kAllTypes[i]));
    weave::LeaseHandle& h = held[i];
    REQUIRE_FALSE(h->lost());
    CHECK(raw.cmd({"PTTL", counter_of(h->key())}).integer > 0);
    // A resent acquire of the same owner (its reply lost on the way) gets the same token.
    const auto again = locks.backend().acquire({h->key(), h->owner_token(), 600ms, kAllTypes[i], 0ms});
    CHECK(again.acquired);
    CHECK(again.fencing_token == h->fencing_token());
    h.release();
  }
}

TEST_CASE("keys: a refresh after the counter vanished (evicted or deleted) gets a new and larger token and never 0",
          "[redis][keys]") {
  RedisServer server;
  auto backend = weave::make_redis_lock_backend(options(server.url()));
  auto raw = server.client();
  for (LockType type : kAllTypes) {
    INFO(name_of(type));
    const std::string key = "vanished:" + name_of(type);
    const auto first = backend->acquire({key, "owner-a", 5000ms, type, 0ms});
    REQUIRE(first.acquired);
    raw.cmd({"DEL", counter_of(key), "{weave:lock:" + key + "}:readers:fence"});
    const auto again = backend->acquire({key, "owner-a", 5000ms, type, 0ms});
    REQUIRE(again.acquired);
    CHECK(again.fencing_token > first.fencing_token);
    CHECK(raw.cmd({"PTTL", counter_of(key)}).integer > 5000);  // outlives the lease again
    REQUIRE(backend->release({key, "owner-a", type}) == weave::ReleaseResult::released);
    const auto next = backend->acquire({key, "owner-b", 5000ms, type, 0ms});
    CHECK(next.fencing_token > again.fencing_token);
  }
}

TEST_CASE("keys: fencing tokens of every lock type keep increasing across a restart without persistence",
          "[redis][keys]") {
  RedisServer server;
  weave::LockClient locks(options(server.url()));
  std::vector<std::uint64_t> last;
  for (LockType type : kAllTypes) {
    auto h = locks.acquire("restart:" + name_of(type), {.ttl = 60s, .type = type});
    last.push_back(h->fencing_token());
    h.release();
  }
  server.restart();  // every counter is gone with the data
  REQUIRE(server.client().cmd({"DBSIZE"}).integer == 0);
  for (std::size_t i = 0; i < kAllTypes.size(); ++i) {
    INFO(name_of(kAllTypes[i]));
    auto h = locks.acquire("restart:" + name_of(kAllTypes[i]), {.ttl = 60s, .type = kAllTypes[i]});
    CHECK(h->fencing_token() > last[i]);
  }
}

