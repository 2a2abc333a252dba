// The shared cache tier's entry reader read_entry (src/cache/redis/keys.cpp),
// which reads "<version>[@<written ms>]:<json>" as the scripts write it.
// Oracle: any text reads as an entry or a miss, never a crash; an entry's
// json is exactly the text after the first ':'; and an entry written from
// parts of the input (8 bytes: version, 8 bytes: written ms, the rest: the
// JSON text) reads back the same version, written_ms and json, with and
// without the "@<ms>" (an older Weave's entry: written_ms 0). An empty JSON
// text (never written: JSON is at least one character) reads as no value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "cache/redis/internal.h"

namespace cr = weave::cache_redis;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const weave::detail::RemoteRead any = cr::read_entry(in);
  if (any.json) {
    const auto colon = in.find(':');
    if (colon == std::string_view::npos || *any.json != in.substr(colon + 1) || any.json->empty()) std::abort();
  } else if (any.version != 0 && in.find(':') == std::string_view::npos) {
    std::abort();  // no ':' at all is a miss
  }

  if (size < 16) return 0;
  std::uint64_t version;
  std::int64_t ms;
  std::memcpy(&version, data, 8);
  std::memcpy(&ms, data + 8, 8);
  const std::string json(in.substr(16));
  for (bool with_ms : {true, false}) {
    std::string text = std::to_string(version);
    if (with_ms) text += '@' + std::to_string(ms);
    text += ':';
    text += json;
    const weave::detail::RemoteRead r = cr::read_entry(text);
    if (r.version != version || r.written_ms != (with_ms ? ms : 0)) std::abort();
    if (json.empty() ? r.json.has_value() : (!r.json || *r.json != json)) std::abort();
  }
  return 0;
}
