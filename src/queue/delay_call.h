// A [[delay]] call as the queue keeps it: the method's qualified name, its
// signature hash (hex: exact in every JSON reader) and its arguments as the
// StoredCallCodec wrote them. Written by the delay interceptor, read by
// DelayWorker.
//   {"m":"shop::Orders::cancel_if_unpaid","s":"9f0c...","a":["o-1"]}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

struct DelayCall {
  std::string method;
  std::uint64_t signature_hash = 0;
  std::string args;  // a JSON array
};

std::string encode_delay_call(std::string_view method, std::uint64_t signature_hash, std::string_view args);
// False when `text` is not a stored call (written by something else).
bool decode_delay_call(std::string_view text, DelayCall& out);

}  // namespace weave::detail
