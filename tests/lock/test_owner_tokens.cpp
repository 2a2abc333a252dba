// Lock owner tokens come from the one token maker (detail::unique_token): a
// random prefix per thread plus a counter, never repeated by another thread
// or by a fork()ed child.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/forked_child.h"
#include "weave/lock.h"

namespace {

std::string token_of(weave::LockClient& locks, const std::string& key) {
  auto h = locks.acquire(key);
  return h->owner_token();
}

}  // namespace

TEST_CASE("owner tokens: threads never share one, and a fork()ed child makes its own prefix", "[lock]") {
  weave::LockOptions o;
  o.url = "mem://owner-tokens";
  weave::LockClient locks(o);
  std::set<std::string> tokens;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::string>> per_thread(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) per_thread[t].push_back(token_of(locks, "t" + std::to_string(t)));
    });
  for (auto& t : threads) t.join();
  for (const auto& list : per_thread) tokens.insert(list.begin(), list.end());
  CHECK(tokens.size() == 4000);

  token_of(locks, "before-fork");  // this thread's prefix exists before the fork
  ForkedChild child([&] {
    weave::LockClient in_child(o);  // the parent's client refuses to lock in the child
    return token_of(in_child, "child");
  });
  const std::string parent_next = token_of(locks, "parent");
  const std::string from_child = child.wait();
  CHECK(child.exited_cleanly());
  REQUIRE(from_child.size() == 15);  // held by a std::string without allocating
  CHECK(from_child != parent_next);                              // same counter, other prefix
  CHECK(from_child.substr(0, 12) != parent_next.substr(0, 12));
}
