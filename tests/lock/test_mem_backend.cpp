// What only the mem:// lease table does (every store's lock semantics are
// tests/lock/test_conformance.cpp): a lease's release goes straight to its
// key's slot, and looks the key up again once slots of its shard were dropped;
// a slot keeps owners of 8 to 16 characters in place, others in a string.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

using namespace std::chrono_literals;

namespace {

// Enough held keys that every one of the table's 64 shards keeps more than
// its 256 idle slots: a slot freed there is dropped at once.
constexpr int kCrowd = 25'000;

weave::LockClient table(const char* url) {
  weave::LockOptions o;
  o.url = url;
  return weave::LockClient(o);
}

std::vector<weave::LeaseHandle> hold_crowd(weave::LockClient& locks) {
  std::vector<weave::LeaseHandle> crowd;
  crowd.reserve(kCrowd);
  for (int i = 0; i < kCrowd; ++i) crowd.push_back(locks.acquire("crowd:" + std::to_string(i), {.ttl = 60s}));
  return crowd;
}

}  // namespace

TEST_CASE("mem:// lock table: a release after other slots of its shard were dropped frees its key", "[lock][mem]") {
  weave::LockClient locks = table("mem://slot-drops-release");
  weave::LeaseHandle key = locks.acquire("key", {.ttl = 60s});
  std::vector<weave::LeaseHandle> crowd = hold_crowd(locks);
  crowd.clear();  // every shard drops slots as they are freed
  REQUIRE_NOTHROW(key.release());
  CHECK(locks.try_acquire("key", {.ttl = 60s}));
  CHECK(locks.stats().lost == 0);
}

TEST_CASE("mem:// lock table: a lease whose slot was dropped after a forced unlock is lost at its release",
          "[lock][mem]") {
  weave::LockClient locks = table("mem://slot-drops-forced");
  std::vector<weave::LeaseHandle> crowd = hold_crowd(locks);
  weave::LeaseHandle key = locks.acquire("key", {.ttl = 60s});
  REQUIRE(locks.force_unlock("key").freed.size() == 1);  // the key's slot is idle now, and dropped
  CHECK_THROWS_AS(key.release(), weave::LeaseLost);
  // A new holder is not disturbed by the old lease's release.
  weave::LeaseHandle next = locks.acquire("key", {.ttl = 60s});
  REQUIRE(next);
  CHECK_NOTHROW(next.release());
}

TEST_CASE("mem:// lock table: owners of every length hold, refuse, release and resend on one key", "[lock][mem]") {
  weave::LockOptions o;
  o.url = "mem://owner-lengths";
  const std::shared_ptr<weave::LockBackend> backend = weave::make_lock_backend(o);
  const std::string key = "owner-lengths";
  // Short, in place (8 to 16) and long owners in turn, each after one of another kind.
  for (const std::size_t n : {1, 8, 40, 15, 7, 16, 17, 9, 0}) {
    INFO("owner of " << n << " characters");
    const std::string owner(n, 'a'), other = owner + "b", prefix = n > 1 ? owner.substr(0, n - 1) + "c" : "c";
    REQUIRE(backend->acquire({key, owner, 10s}).acquired);
    CHECK_FALSE(backend->acquire({key, other, 10s}).acquired);
    CHECK_FALSE(backend->acquire({key, prefix, 10s}).acquired);  // as long, differs in the last character
    CHECK(backend->acquire({key, owner, 10s}).acquired);          // its own again: refreshed
    CHECK(backend->release({key, prefix}) == weave::ReleaseResult::lost);
    const std::vector<weave::LockState> held = backend->list(key);
    REQUIRE(held.size() == 1);
    REQUIRE(held[0].holders.size() == 1);
    CHECK(held[0].holders[0].owner == owner);
    CHECK(backend->release({key, owner}) == weave::ReleaseResult::released);
    // A resend answers released (an empty owner never does).
    CHECK(backend->release({key, owner}) == (n == 0 ? weave::ReleaseResult::lost : weave::ReleaseResult::released));
    CHECK(backend->release({key, prefix}) == weave::ReleaseResult::lost);
  }
}
