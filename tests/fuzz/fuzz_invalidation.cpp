// The invalidation channel's wire format (src/cache/redis/invalidation.cpp).
// Oracle: parse_invalidation on any text never crashes and, when it parses,
// every part it returns lies inside the message; and a message built by
// invalidation() from parts of the input (split at NUL: sender, name, then
// keys) parses back to exactly the sender, name, key(s) and kind it was
// built with: one key (kinds 'k' and 'f'), the whole name, and a batch of
// keys as a Weave before per-write invalidations wrote it (still read).
// A sender never holds '|' (it is a unique token), so '|' is dropped from it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cache/redis/internal.h"

namespace {
namespace cr = weave::cache_redis;

bool inside(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void check_parts(const cr::ParsedInvalidation& p, std::string_view m) {
  if (!inside(p.sender, m) || !inside(p.name, m)) std::abort();
  for (std::string_view k : p.keys)
    if (!inside(k, m)) std::abort();
  if (p.all && !p.keys.empty()) std::abort();  // "empty with all"
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (const auto p = cr::parse_invalidation(in)) check_parts(*p, in);

  std::vector<std::string> parts;
  for (std::size_t from = 0;;) {
    const auto nul = in.find('\0', from);
    parts.emplace_back(in.substr(from, nul == std::string_view::npos ? std::string_view::npos : nul - from));
    if (nul == std::string_view::npos) break;
    from = nul + 1;
  }
  std::string sender;
  for (char c : parts[0])
    if (c != '|') sender += c;
  const std::string name = parts.size() > 1 ? parts[1] : "";
  const std::string key = parts.size() > 2 ? parts[2] : "";

  for (char kind : {'k', 'f'}) {  // one key
    const std::string_view k = key;
    const std::string m = cr::invalidation(sender, name, &k, kind);
    const auto p = cr::parse_invalidation(m);
    if (!p) std::abort();
    check_parts(*p, m);
    if (p->sender != sender || p->name != name || p->all || p->wake_only != (kind == 'f')) std::abort();
    if (p->keys.size() != 1 || p->keys[0] != key) std::abort();
  }
  {  // the whole name
    const std::string m = cr::invalidation(sender, name, nullptr);
    const auto p = cr::parse_invalidation(m);
    if (!p || p->sender != sender || p->name != name || !p->all || p->wake_only || !p->keys.empty()) std::abort();
  }
  {  // a batch of two or more keys (parts 2...): the whole name's message, then "<size>:<key>" per key
    const std::vector<std::string> keys(parts.size() > 2 ? parts.begin() + 2 : parts.end(), parts.end());
    if (keys.size() >= 2) {
      std::string m = cr::invalidation(sender, name, nullptr);
      for (const std::string& k : keys) m += std::to_string(k.size()) + ':' + k;
      const auto p = cr::parse_invalidation(m);
      if (!p) std::abort();
      check_parts(*p, m);
      if (p->sender != sender || p->name != name || p->wake_only || p->all || p->keys.size() != keys.size())
        std::abort();
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (p->keys[i] != keys[i]) std::abort();
    }
  }
  return 0;
}
