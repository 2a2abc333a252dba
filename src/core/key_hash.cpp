#include "core/key_hash.h"

#include <sys/random.h>

namespace WEAVE_NAMESPACE::detail {

std::uint64_t key_hash_seed = 0;

namespace {
// Priority 101, the first a program may use: before every ordinary static
// initializer, so no table hashes a key with the seed still unset. A failed
// getrandom (no entropy source at all) leaves a fixed seed: tables still
// work, only without the protection.
[[gnu::constructor(101)]] void draw_key_hash_seed() noexcept {
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof seed)) key_hash_seed = seed;
}
}  // namespace

}  // namespace weave::detail
