// detail::unique_token(): the owner of a dedupe claim, a cache lease or
// refresh claim. Distinct across threads, and a fork()ed child draws its own
// random part (it must not hand out its parent's next tokens).
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/forked_child.h"
#include "core/unique_token.h"

TEST_CASE("unique_token: distinct across threads, and a forked child draws its own random part", "[core]") {
  std::vector<std::vector<std::string>> per_thread(4);
  std::vector<std::thread> threads;
  for (auto& list : per_thread)
    threads.emplace_back([&list] {
      for (int i = 0; i < 1000; ++i) list.push_back(weave::detail::unique_token());
    });
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& list : per_thread) all.insert(list.begin(), list.end());
  CHECK(all.size() == 4000);

  const std::string before = weave::detail::unique_token();
  ForkedChild child([] { return weave::detail::unique_token(); });
  const std::string parent_next = weave::detail::unique_token();
  const std::string from_child = child.wait();
  REQUIRE(child.exited_cleanly());
  REQUIRE(from_child.size() > 33);                          // 32 hex digits, ':', a counter
  CHECK(from_child.substr(0, 32) != before.substr(0, 32));  // another random part than the parent's
  CHECK(parent_next.substr(0, 32) == before.substr(0, 32));
  CHECK(from_child != parent_next);
}
