#include "core/unique_token.h"

#include <pthread.h>
#include <sys/random.h>
#include <sys/types.h>

#include <atomic>
#include <charconv>
#include <cstdint>

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
}  // namespace

std::string unique_token() {
  struct Source {
    std::uint64_t generation = 0;
    char text[33 + 20];  // 32 hex digits, ':', then the counter in hex
    std::uint64_t next = 0;
  };
  thread_local Source source;
  const std::uint64_t generation = fork_generation.load(std::memory_order_relaxed);
  if (source.generation != generation) {
    unsigned char bytes[16];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
      throw IoError("weave: getrandom failed");
    static constexpr char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) {
      source.text[2 * i] = digits[bytes[i] >> 4];
      source.text[2 * i + 1] = digits[bytes[i] & 15];
    }
    source.text[32] = ':';
    source.generation = generation;
    source.next = 0;
  }
  char* const end = std::to_chars(source.text + 33, source.text + sizeof source.text, source.next++, 16).ptr;
  return std::string(source.text, end);
}

}  // namespace weave::detail
