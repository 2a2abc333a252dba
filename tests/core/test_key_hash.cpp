// detail::key_hash(): the hash of Weave's in-process tables. Equal keys hash
// equal, near keys spread over a table's buckets, and the seed is drawn per
// process (keys crafted to collide under one seed do not under another).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/key_hash.h"

using weave::detail::key_hash;

TEST_CASE("key_hash: equal keys hash equal, and one changed byte anywhere changes the hash", "[core]") {
  for (std::size_t n : {0u, 1u, 3u, 4u, 7u, 8u, 15u, 16u, 17u, 31u, 32u, 33u, 100u}) {
    std::string key(n, 'k');
    const std::size_t h = key_hash(key);
    CHECK(key_hash(std::string(key)) == h);
    for (std::size_t i = 0; i < n; ++i) {
      std::string other = key;
      other[i] = 'j';
      CHECK(key_hash(other) != h);
    }
    CHECK(key_hash(key + '\0') != h);  // the length counts
  }
}

TEST_CASE("key_hash: keys a template renders spread evenly over a table's buckets", "[core]") {
  constexpr std::size_t kBuckets = 1024, kKeys = 100'000;
  std::vector<int> load(kBuckets);
  for (std::size_t i = 0; i < kKeys; ++i) ++load[key_hash("order:" + std::to_string(i)) % kBuckets];
  const int fullest = *std::max_element(load.begin(), load.end());
  CHECK(fullest < 2 * static_cast<int>(kKeys / kBuckets));  // a mean of ~98: no bucket twice that
}

TEST_CASE("key_hash: keys that share a bucket under one seed spread under another", "[core]") {
  REQUIRE(weave::detail::key_hash_seed != 0);  // drawn at start (getrandom), not left unset
  // An attacker who knew the seed could pick keys that all land in bucket 0;
  // under another seed (another process's) those keys spread.
  constexpr std::size_t kBuckets = 64;
  const std::uint64_t known = 12345, other = 67890;
  std::vector<std::string> crafted;
  for (int i = 0; crafted.size() < 200; ++i) {
    std::string key = "user:" + std::to_string(i);
    if (key_hash(key, known) % kBuckets == 0) crafted.push_back(std::move(key));
  }
  std::vector<int> load(kBuckets);
  for (const std::string& key : crafted) ++load[key_hash(key, other) % kBuckets];
  CHECK(*std::max_element(load.begin(), load.end()) < 20);  // 200 keys over 64 buckets: ~3 each
}
