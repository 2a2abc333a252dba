// weave::append_key's encoding is injective: two values (the input split at
// its first NUL) rendered into "p:<a>:<b>" decode back to exactly (a, b).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "weave/key.h"

namespace {
// The text of one %-encoded value.
std::string decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) std::abort();  // an escape is always whole
    auto hex = [](char c) { return c <= '9' ? c - '0' : c - 'A' + 10; };
    out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
    i += 2;
  }
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto nul = in.find('\0');
  const std::string a(in.substr(0, nul)), b(nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1));
  std::string key = "p:";
  weave::append_key(key, a);
  key += ':';
  weave::append_key(key, b);
  const auto sep = key.find(':', 2);  // the first ':' after "p:" is the template's
  if (sep == std::string::npos) std::abort();
  if (decode(std::string_view(key).substr(2, sep - 2)) != a) std::abort();
  if (decode(std::string_view(key).substr(sep + 1)) != b) std::abort();
  return 0;
}
