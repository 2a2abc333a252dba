// The hash of a key in Weave's in-process tables (mem:// stores, the cache's
// local tier): inline, a few instructions for the short keys templates
// render, and seeded per process, so keys crafted to collide in one process
// (a caller choosing the arguments a key is made of) do not collide in
// another: without the seed, std::hash's fixed function lets such keys put
// every entry of a table in one bucket.
//
//   std::size_t h = detail::key_hash("order:42");
//   detail::KeyMap<Entry> entries;   // std::unordered_map hashed by key_hash
//
// A folded multiply (the 128-bit product's halves XORed) mixes 16 bytes per
// step; keys of up to 16 bytes take one step and the final mix. Both factors
// carry the seed: with one factor left unmasked, a key could make it zero
// and the product would not depend on the seed (nor on the rest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

#include "weave/abi.h"  // WEAVE_NAMESPACE

namespace WEAVE_NAMESPACE::detail {

// Drawn from getrandom() once per process, before any static initializer
// of Weave's or the program's runs (key_hash.cpp).
extern std::uint64_t key_hash_seed;

namespace key_hash_detail {
inline std::uint64_t fold(std::uint64_t a, std::uint64_t b) noexcept {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}
inline std::uint64_t load8(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline std::uint64_t load4(const char* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
constexpr std::uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull, k2 = 0x8ebc6af09c88c6e3ull;
}  // namespace key_hash_detail

// `seed`: the process's, unless a test asks for another.
inline std::size_t key_hash(std::string_view key, std::uint64_t seed = key_hash_seed) noexcept {
  using namespace key_hash_detail;
  const char* p = key.data();
  std::size_t n = key.size();
  std::uint64_t h = seed ^ k0;
  for (; n > 16; n -= 16, p += 16) h = fold(load8(p) ^ h ^ k1, load8(p + 8) ^ h ^ k2);
  std::uint64_t a = 0, b = 0;
  if (n >= 8) {
    a = load8(p);
    b = load8(p + n - 8);
  } else if (n >= 4) {
    a = load4(p);
    b = load4(p + n - 4);
  } else if (n > 0) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    a = (std::uint64_t{u[0]} << 16) | (std::uint64_t{u[n >> 1]} << 8) | u[n - 1];
  }
  return fold(fold(a ^ h ^ k1, b ^ h ^ k2) ^ k0, key.size() ^ k1);
}

// A key with its hash, made once: finds its entry in a KeyMap (and may pick
// a shard) without hashing again or making a std::string.
struct HashedKey {
  explicit HashedKey(std::string_view k) noexcept : key(k), hash(key_hash(k)) {}
  std::string_view key;
  std::size_t hash;
};
struct KeyHasher {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const noexcept { return key_hash(key); }
  std::size_t operator()(const HashedKey& key) const noexcept { return key.hash; }
};
struct KeyEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
  bool operator()(const HashedKey& a, std::string_view b) const noexcept { return a.key == b; }
  bool operator()(std::string_view a, const HashedKey& b) const noexcept { return a == b.key; }
};
// A table of keys a caller's arguments make (mem:// entries, waiters per
// key, calls in flight per key): hashed by key_hash, looked up by a
// std::string_view or a HashedKey without making a std::string.
template <class V>
using KeyMap = std::unordered_map<std::string, V, KeyHasher, KeyEqual>;

}  // namespace weave::detail
