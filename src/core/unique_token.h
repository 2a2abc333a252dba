// A token no other caller in the deployment holds: the one owner-token maker.
// It names the owner of every lease (a lock's, a dedupe claim, a cache fill
// lease or refresh claim) and a cache process's invalidations. Drawn from
// getrandom(), the kernel's generator libuuid's random UUIDs come from too,
// so a program using only the cache links no libuuid.
#pragma once

#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// 15 characters (base64url): 72 random bits per thread, drawn again every
// 262,144 tokens and in a fork()ed child, then an 18-bit counter. Unique
// across processes and hosts (two of a million threads drawing the same
// bits: about 1 in 10^10), no system call per token, and short enough for a
// std::string to hold without allocating: a lease's owner costs nothing on
// the heap.
inline constexpr int kTokenSize = 15;
std::string unique_token();

// unique_token()'s text in place, for a holder that keeps it only until it
// copies it into a lease (no std::string made and moved on the way).
// 16 bytes, aligned: returned in two registers, written as two words.
struct alignas(8) TokenText {
  char text[kTokenSize + 1];  // (the last byte is 0)
  std::string_view view() const noexcept { return {text, kTokenSize}; }
};
TokenText unique_token_text();

}  // namespace weave::detail
