#include "core/unique_token.h"

#include <pthread.h>
#include <sys/random.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {
namespace {
// Bumped in a fork()ed child: its threads draw new random bits there
// (getpid() per token would be a system call on every guarded call).
std::atomic<std::uint64_t> fork_generation{1};
[[maybe_unused]] const bool fork_watched = [] {
  ::pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1, std::memory_order_relaxed); });
  return true;
}();

// base64url: printable in logs and `weave locks`, safe in any Redis argument.
constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr int kPrefix = 12;   // 72 random bits
constexpr int kCounter = 3;   // 18 bits: 262,144 tokens per prefix
static_assert(kPrefix + kCounter == kTokenSize);
}  // namespace

TokenText unique_token_text() {
  struct Source {
    std::uint64_t generation = 0;
    std::uint32_t next = 1u << (6 * kCounter);  // spent: draw a prefix first
    char text[kTokenSize];
  };
  thread_local Source source;
  const std::uint64_t generation = fork_generation.load(std::memory_order_relaxed);
  if (source.generation != generation || source.next == 1u << (6 * kCounter)) [[unlikely]] {
    unsigned char bytes[kPrefix];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
      throw IoError("weave: getrandom failed");
    for (int i = 0; i < kPrefix; ++i) source.text[i] = kDigits[bytes[i] & 63];
    source.generation = generation;
    source.next = 0;
  }
  const std::uint32_t n = source.next++;
  for (int i = 0; i < kCounter; ++i) source.text[kPrefix + i] = kDigits[(n >> (6 * (kCounter - 1 - i))) & 63];
  TokenText out;
  std::memcpy(out.text, source.text, kTokenSize);
  return out;
}

std::string unique_token() { return std::string(unique_token_text().view()); }

}  // namespace weave::detail
