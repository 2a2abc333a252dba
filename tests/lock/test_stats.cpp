// LockClient::stats(): what each kind of request ends as, shared by copies
// of a client, on the embedded backend.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

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
