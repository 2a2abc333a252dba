// detail::unique_token(): the owner of a dedupe claim, a cache lease or
// refresh claim. Distinct across threads, and a fork()ed child draws its own
// random part (it must not hand out its parent's next tokens).
#include <catch2/catch.hpp>

#include <cctype>
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
  REQUIRE(from_child.size() == 15);                         // 12 random characters, a 3-character counter
  CHECK(from_child.substr(0, 12) != before.substr(0, 12));  // another random part than the parent's
  CHECK(parent_next.substr(0, 12) == before.substr(0, 12));
  CHECK(from_child != parent_next);
}

TEST_CASE("unique_token: fits a std::string's own buffer, prints as base64url, and a spent counter draws a new random part", "[core]") {
  const std::string first = weave::detail::unique_token();
  REQUIRE(first.size() == 15);
  CHECK(first.capacity() == 15);  // libstdc++'s in-object buffer: no heap allocation per token
  for (char c : first) CHECK((std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'));
  // 262,144 tokens per random part: the next ones share it, then it changes.
  std::set<std::string> prefixes{first.substr(0, 12)};
  std::set<std::string> seen{first};
  for (int i = 0; i < 262'144 + 10; ++i) {
    const std::string t = weave::detail::unique_token();
    CHECK(seen.insert(t).second);
    prefixes.insert(t.substr(0, 12));
  }
  CHECK(prefixes.size() == 2);
}
