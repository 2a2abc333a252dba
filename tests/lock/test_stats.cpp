// LockClient::stats(): what each kind of request ends as, shared by copies
// of a client, on the embedded backend.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "weave/error.h"
#include "weave/lease.h"
#include "weave/lock.h"

using namespace std::chrono_literals;

TEST_CASE("lock stats: acquired, re-entered, busy, errors, released and lost are each counted once",
          "[lock][stats]") {
  weave::LockOptions o;
  o.url = "mem://stats";
  weave::LockClient locks(o);
  weave::LockClient copy = locks;  // copies count together
  weave::LockClient other(o);      // another client of the same table: its own counters

  auto a = locks.acquire("k1");
  {
    weave::LeaseScope in_chain(a);
    auto again = copy.acquire("k1");  // served by the chain's lease
    again.release();
  }
  CHECK_FALSE(other.try_acquire("k1", {.wait = 30ms}));  // busy for `other`
  CHECK_THROWS_AS(locks.acquire(""), weave::UsageError);  // an error
  a.release();
  auto short_lived = locks.acquire("k2", {.ttl = 20ms});
  std::this_thread::sleep_for(200ms);  // runs out while held: lost
  CHECK(short_lived->lost());
  CHECK_THROWS_AS(short_lived.release(), weave::LeaseLost);

  const weave::LockStats s = locks.stats();
  CHECK(s.acquired == 2);
  CHECK(s.reentered == 1);
  CHECK(s.busy == 0);
  CHECK(s.errors == 1);
  CHECK(s.released == 2);
  CHECK(s.lost == 1);
  CHECK(s.acquiring > 0us);
  CHECK(copy.stats().acquired == s.acquired);

  const weave::LockStats t = other.stats();
  CHECK(t.busy == 1);
  CHECK(t.acquired == 0);
  CHECK(t.acquiring >= 30ms);  // it waited its 30 ms
}

// The first threads of the process own a counter stripe each (a load and a
// store per count); later ones share one stripe and add atomically. Many
// threads at once, most of them past the owned stripes, must lose no count.
TEST_CASE("lock stats: many threads at once lose no count", "[lock][stats]") {
  weave::LockOptions o;
  o.url = "mem://stats-threads";
  weave::LockClient locks(o);
  constexpr int kThreads = 40, kRounds = 2'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&locks, t] {
      const std::string key = "k" + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) locks.acquire(key, {.ttl = 10s}).release();
    });
  for (auto& t : threads) t.join();
  const weave::LockStats s = locks.stats();
  CHECK(s.acquired == std::uint64_t{kThreads} * kRounds);
  CHECK(s.released == std::uint64_t{kThreads} * kRounds);
  CHECK(s.errors == 0);
}
