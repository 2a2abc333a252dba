// Where the shared tier keeps things in Redis, and what an entry holds, in
// one place: the scripts (src/cache/scripts/) receive these keys, and every
// key of one cache key shares the entry's {...} hash tag, so a script touches
// one cluster slot. docs/cache.md, "Keys in Redis", is the table of them.
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "cache/redis/internal.h"
#include "core/glob.h"
#include "weave/key.h"

namespace WEAVE_NAMESPACE::cache_redis {
namespace {

// A whole decimal number that fits T, else nothing.
template <class T>
std::optional<T> decimal(std::string_view text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// A cache's name in its entries' keys: the first ':' that is not %-encoded
// ends it, so cache "t:1" with key "x" and cache "t" with key "1:x" are two
// entries, and an evict-all of cache "a" reaches no entry of cache "a:b".
constexpr std::string_view kNameReserved = "%:{}";

}  // namespace

std::string entry_head(std::string_view prefix, std::string_view name, std::size_t more) {
  std::string head;
  head.reserve(prefix.size() + name.size() + more + 8);
  head += '{';
  head += prefix;
  append_percent_encoded(head, name, kNameReserved);
  head += ':';
  return head;
}

std::string entry_key(std::string_view prefix, std::string_view name, std::string_view key) {
  std::string k = entry_head(prefix, name, key.size());
  k += key;
  k += '}';
  return k;
}

std::string_view key_of_entry(std::string_view entry, std::string_view head) {
  if (entry.size() <= head.size() || !entry.starts_with(head) || !entry.ends_with('}')) return {};
  return entry.substr(head.size(), entry.size() - head.size() - 1);
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
  const std::string head = entry_head(prefix, name);
  std::string pattern;
  // entries end with '}', their leases ("...}fill") are not evicted
  pattern.append("{").append(detail::glob_literal(std::string_view(head).substr(1))).append("*}");
  return pattern;
}

detail::RemoteRead read_entry(std::string_view entry) {
  detail::RemoteRead read;
  const auto colon = entry.find(':');
  if (colon == std::string_view::npos) return read;  // not written by Weave: a miss (a fill will be refused)
  const std::string_view head = entry.substr(0, colon);
  const auto at = head.find('@');
  const std::optional<std::uint64_t> version = decimal<std::uint64_t>(head.substr(0, at));
  std::optional<std::int64_t> written_ms = std::int64_t{0};
  if (at != std::string_view::npos) written_ms = decimal<std::int64_t>(head.substr(at + 1));
  if (!version || !written_ms) return detail::RemoteRead{};  // a corrupt head: a miss, as for a foreign value
  read.version = *version;
  read.written_ms = *written_ms;
  if (colon + 1 < entry.size()) read.json = std::string(entry.substr(colon + 1));
  return read;
}

}  // namespace weave::cache_redis
