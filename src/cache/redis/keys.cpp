// Where the shared tier keeps things in Redis, and what an entry holds, in
// one place: the scripts (src/cache/scripts/) receive these keys, and every
// key of one cache key shares the entry's {...} hash tag, so a script touches
// one cluster slot. docs/cache.md, "Keys in Redis", is the table of them.
#include <string>
#include <string_view>

#include "cache/redis/internal.h"
#include "core/glob.h"

namespace WEAVE_NAMESPACE::cache_redis {
namespace {

template <class T>
T digits(std::string_view text) {
  T v = 0;
  for (char c : text) v = v * 10 + static_cast<T>(c - '0');
  return v;
}

}  // namespace

std::string entry_key(std::string_view prefix, std::string_view name, std::string_view key) {
  std::string k;
  k.reserve(prefix.size() + name.size() + key.size() + 3);
  k += '{';
  k += prefix;
  k += name;
  k += ':';
  k += key;
  k += '}';
  return k;
}

std::string fill_lease_key(const std::string& entry) { return entry + "fill"; }

std::string refresh_claim_key(const std::string& entry) { return entry + "refresh"; }

std::string invalidation_channel(std::string_view prefix) {
  std::string channel;  // appended, not "{" + ...: g++ 12 -O3 warns (-Wrestrict) on that
  channel.reserve(prefix.size() + 15);
  channel.append("{").append(prefix).append("}invalidations");
  return channel;
}

std::string entries_pattern(std::string_view prefix, std::string_view name) {
  // (appended, not "{" + ...: g++ 12 -O3 warns (-Wrestrict) on that)
  std::string pattern;
  pattern.append("{").append(detail::glob_literal(std::string(prefix).append(name).append(":"))).append("*}");  // entries end with '}', their leases ("...}fill") are not evicted
  return pattern;
}

detail::RemoteRead read_entry(std::string_view entry) {
  detail::RemoteRead read;
  const auto colon = entry.find(':');
  if (colon == std::string_view::npos) return read;  // not written by Weave: a miss (a fill will be refused)
  const std::string_view head = entry.substr(0, colon);
  const auto at = head.find('@');
  read.version = digits<std::uint64_t>(head.substr(0, at));
  if (at != std::string_view::npos) read.written_ms = digits<std::int64_t>(head.substr(at + 1));
  if (colon + 1 < entry.size()) read.json = std::string(entry.substr(colon + 1));
  return read;
}

}  // namespace weave::cache_redis
