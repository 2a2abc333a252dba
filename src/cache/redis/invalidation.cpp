// The invalidation channel's wire format, written and read here only: every
// process of a deployment (and a Weave of an older version during a rolling
// upgrade) must read what the others write, so the format is kept in one
// place beside its compatibility rules.
//
// "<sender>|k|<name size>|<name><key>" (drop the key), "<sender>|a|<name
// size>|<name>" (drop the name), or kind 'f' (a fill lease was released with a
// waiter: wake it; an older Weave reads it as 'k', which only drops a copy).
// A batch of several keys of one name, as Weave wrote before each write
// published its own, is kind 'a' followed by "<key size>:<key>" for each
// key: read here still, for a rolling upgrade.
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/redis/internal.h"

namespace WEAVE_NAMESPACE::cache_redis {
namespace {

// A size written in decimal before `end`; nothing when it is not one, or
// does not fit (a wrapped size would cut the message at a wrong place).
std::optional<std::size_t> size_prefix(std::string_view& rest, char end) {
  const auto stop = rest.find(end);
  if (stop == std::string_view::npos || stop == 0) return std::nullopt;
  std::size_t n = 0;
  const auto [last, ec] = std::from_chars(rest.data(), rest.data() + stop, n);
  if (ec != std::errc() || last != rest.data() + stop) return std::nullopt;
  rest.remove_prefix(stop + 1);
  if (n > rest.size()) return std::nullopt;
  return n;
}

}  // namespace

std::string invalidation(std::string_view sender, std::string_view name, const std::string_view* key, char kind) {
  std::string m(sender);
  m += '|';
  m += key ? kind : 'a';
  m += '|';
  m += std::to_string(name.size());
  m += '|';
  m += name;
  if (key) m += *key;
  return m;
}

std::optional<ParsedInvalidation> parse_invalidation(std::string_view m) {
  ParsedInvalidation p;
  const auto bar = m.find('|');
  if (bar == std::string_view::npos || m.size() < bar + 4) return std::nullopt;
  p.sender = m.substr(0, bar);
  p.all = m[bar + 1] == 'a';
  p.wake_only = m[bar + 1] == 'f';
  std::string_view rest = m.substr(bar + 3);
  const auto n = size_prefix(rest, '|');
  if (!n) return std::nullopt;
  p.name = rest.substr(0, *n);
  rest.remove_prefix(*n);
  if (!p.all) {
    p.keys.push_back(rest);
    return p;
  }
  // A batch: its keys, or the whole name when the list does not parse.
  while (!rest.empty()) {
    const auto k = size_prefix(rest, ':');
    if (!k) {
      p.keys.clear();
      return p;
    }
    p.keys.push_back(rest.substr(0, *k));
    rest.remove_prefix(*k);
  }
  p.all = p.keys.empty();
  return p;
}

}  // namespace weave::cache_redis
