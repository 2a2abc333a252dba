// A stored [[delay]] call as the queue keeps it, decode_delay_call
// (src/queue/delay_call.cpp), {"m":<method>,"s":"<hex hash>","a":[...]}.
// Oracle: any text decodes to a call or false, never a crash (a text with a
// NUL byte is refused: JSON has none raw; a nesting
// deep enough to overflow a recursive reader is refused: whatever it
// accepts nests at most kMaxJsonDepth = 128 levels); a call it decodes
// encodes (encode_delay_call) to text that decodes to the same call; and a
// call encoded from parts of the input (split at NUL: method, 8 bytes of
// hash, arguments up to the next NUL) decodes back to the same method, hash
// and arguments when the arguments are a JSON array nesting at most 127
// levels (the call's object is one more), and is refused when they nest
// deeper.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "queue/delay_call.h"
#include "weave/json_codec.h"

namespace {
using weave::detail::DelayCall;

// Nesting of the arrays and objects of `j`, recursively (a decoder that let
// a deep text through crashes here, which is a finding too).
int depth(const nlohmann::json& j) {
  if (!j.is_array() && !j.is_object()) return 0;
  int d = 0;
  for (const auto& e : j) d = std::max(d, depth(e));
  return d + 1;
}

bool same(const DelayCall& a, const DelayCall& b) {
  return a.method == b.method && a.signature_hash == b.signature_hash && a.args == b.args;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  DelayCall call;
  if (weave::detail::decode_delay_call(in, call)) {
    if (in.find('\0') != std::string_view::npos) std::abort();
    const nlohmann::json j = nlohmann::json::parse(in);  // it decoded: JSON
    if (depth(j) > weave::detail::kMaxJsonDepth) std::abort();
    if (!nlohmann::json::parse(call.args).is_array()) std::abort();
    DelayCall back;
    if (!weave::detail::decode_delay_call(
            weave::detail::encode_delay_call(call.method, call.signature_hash, call.args), back) ||
        !same(back, call))
      std::abort();
  }

  // A call encoded from parts of the input.
  const auto nul1 = in.find('\0');
  if (nul1 == std::string_view::npos || in.size() < nul1 + 9) return 0;
  const std::string method(in.substr(0, nul1));
  std::uint64_t hash;
  std::memcpy(&hash, data + nul1 + 1, 8);
  // nlohmann's reader ends a text at a NUL byte (what follows is never read),
  // and JSON written by an encoder never holds one raw: the arguments' text
  // ends at the next NUL.
  std::string_view args = in.substr(nul1 + 9);
  args = args.substr(0, args.find('\0'));
  const nlohmann::json parsed = nlohmann::json::parse(args, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array() || weave::detail::json_deeper_than(args, 1000)) return 0;  // (depth() below recurses)
  std::string text;
  try {
    text = weave::detail::encode_delay_call(method, hash, args);
  } catch (const nlohmann::json::type_error&) {
    return 0;  // a method name that is not UTF-8: the encoder refuses it (names are C++ identifiers)
  }
  DelayCall back;
  const bool ok = weave::detail::decode_delay_call(text, back);
  if (ok != (depth(parsed) < weave::detail::kMaxJsonDepth)) std::abort();
  if (ok && (back.method != method || back.signature_hash != hash || back.args != parsed.dump())) std::abort();
  return 0;
}
