#include "core/unique_token.h"

#include <pthread.h>
#include <sys/random.h>
#include <sys/types.h>

#include <atomic>
#include <bit>
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

// Where byte k of a word's memory sits in its value.
constexpr int byte_shift(int k) { return std::endian::native == std::endian::little ? 8 * k : 8 * (7 - k); }
}  // namespace

TokenText unique_token_text() {
  // The text is kept as two words and the counter's characters are or'ed
  // into the second in a register: written byte by byte and read back as
  // words, it stalled store forwarding (a tenth of a woven mem:// lock call).
  struct Source {
    std::uint64_t generation = 0;
    std::uint32_t next = 1u << (6 * kCounter);  // spent: draw a prefix first
    std::uint64_t head = 0;                      // characters 0-7
    std::uint64_t tail = 0;                      // characters 8-11
  };
  static_assert(kPrefix == 12 && kCounter == 3 && sizeof(TokenText) == 16);
  thread_local Source source;
  const std::uint64_t generation = fork_generation.load(std::memory_order_relaxed);
  if (source.generation != generation || source.next == 1u << (6 * kCounter)) [[unlikely]] {
    unsigned char bytes[kPrefix];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
      throw IoError("weave: getrandom failed");
    char prefix[16] = {};
    for (int i = 0; i < kPrefix; ++i) prefix[i] = kDigits[bytes[i] & 63];
    std::memcpy(&source.head, prefix, 8);
    std::memcpy(&source.tail, prefix + 8, 8);
    source.generation = generation;
    source.next = 0;
  }
  const std::uint32_t n = source.next++;
  std::uint64_t tail = source.tail;
  for (int i = 0; i < kCounter; ++i) {
    const auto digit = static_cast<unsigned char>(kDigits[(n >> (6 * (kCounter - 1 - i))) & 63]);
    tail |= std::uint64_t{digit} << byte_shift(kPrefix - 8 + i);  // character 12 + i
  }
  TokenText out;
  std::memcpy(out.text, &source.head, 8);
  std::memcpy(out.text + 8, &tail, 8);
  return out;
}

std::string unique_token() { return std::string(unique_token_text().view()); }

}  // namespace weave::detail
