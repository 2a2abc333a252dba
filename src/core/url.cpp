// One parser for every store URL (mem://, redis://, redis+cluster://,
// redis+sentinel://, redlock://): include/weave/url.h.
#include "weave/url.h"

#include <cctype>
#include <charconv>

#include "weave/error.h"
#include "weave/key.h"

namespace WEAVE_NAMESPACE {
namespace {

bool parse_uint(std::string_view s, long long& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

// `url` is the redacted text, for errors.
std::string percent_decode(std::string_view s, const std::string& url) {
  std::optional<std::string> out = percent_decoded(s);
  if (!out) throw ConfigError("url '" + url + "': bad %-escape");
  return std::move(*out);
}

}  // namespace

std::string redact_url(std::string_view url) {
  // The userinfo is everything between "://" and the last '@' (the parser's
  // rule); its password, after the first ':'. Without "://", any
  // "user:password@" prefix.
  const auto sep = url.find("://");
  const std::size_t start = sep == std::string_view::npos ? 0 : sep + 3;
  const auto at = url.rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  const auto colon = url.find(':', start);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  std::string out(url.substr(0, colon + 1));
  out += "***";
  out += url.substr(at);
  return out;
}

StoreUrl parse_store_url(std::string_view text) {
  const std::string url = redact_url(text);
  auto bad = [&](const std::string& why) { return ConfigError("url '" + url + "': " + why); };
  const auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) throw bad("expected <scheme>://..., e.g. mem:// or redis://host:6379");
  StoreUrl u;
  for (char c : text.substr(0, sep)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
      throw bad("bad scheme");
    u.scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::string_view rest = text.substr(sep + 3);
  if (u.scheme == "mem") {
    for (char c : rest)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
        throw bad("a mem:// URL takes only an optional table name ([A-Za-z0-9._-])");
    u.name = std::string(rest);
    return u;
  }
  // [user[:password]@]host[:port][/db]
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = info.find(':');
    u.user = percent_decode(info.substr(0, colon), url);
    if (colon != std::string_view::npos) u.password = percent_decode(info.substr(colon + 1), url);
  }
  std::string_view hostport = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (u.scheme == "redis+sentinel") {  // /<master name>[/<db>]
      const auto second = db.find('/');
      u.name = std::string(db.substr(0, second));
      db = second == std::string_view::npos ? std::string_view() : db.substr(second + 1);
    }
    long long n = 0;
    if (!db.empty()) {
      if (!parse_uint(db, n) || n > 1'000'000) throw bad("the database must be a number, got '" + std::string(db) + "'");
      u.db = static_cast<int>(n);
    }
  }
  const int default_port = u.scheme == "redis+sentinel"                                             ? 26379
                           : u.scheme == "redis" || u.scheme == "redis+cluster" || u.scheme == "redlock" ? 6379
                                                                                                         : 0;
  // One host[:port], or [ipv6][:port].
  auto host_and_port = [&](std::string_view hp) {
    StoreUrl::Host h;
    std::string_view port;
    if (!hp.empty() && hp.front() == '[') {
      const auto close = hp.find(']');
      if (close == std::string_view::npos) throw bad("unclosed '[' in the host");
      h.host = std::string(hp.substr(1, close - 1));
      std::string_view after = hp.substr(close + 1);
      if (!after.empty()) {
        if (after.front() != ':') throw bad("expected ':port' after ']'");
        port = after.substr(1);
        if (port.empty()) throw bad("empty port");
      }
    } else {
      const auto colon = hp.rfind(':');
      h.host = std::string(hp.substr(0, colon));
      if (colon != std::string_view::npos) {
        port = hp.substr(colon + 1);
        if (port.empty()) throw bad("empty port");
      }
    }
    if (h.host.empty()) throw bad(hp.empty() ? "no host (an empty entry in the list)" : "no host");
    h.port = default_port;
    if (!port.empty()) {
      long long n = 0;
      if (!parse_uint(port, n) || n < 1 || n > 65535) throw bad("bad port '" + std::string(port) + "'");
      h.port = static_cast<int>(n);
    }
    for (const auto& other : u.hosts)
      if (other.host == h.host && other.port == h.port)
        throw bad("host " + h.host + ":" + std::to_string(h.port) + " is listed twice");
    u.hosts.push_back(std::move(h));
  };
  if (u.scheme == "redis+sentinel" && u.name.empty())
    throw bad("name the master the sentinels watch: redis+sentinel://host:26379,.../<master name>[/db]");
  for (std::size_t start = 0;;) {
    const auto comma = hostport.find(',', start);
    host_and_port(hostport.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (u.hosts.size() == 1 && u.scheme != "redis+sentinel") {
    u.host = u.hosts.front().host;
    u.port = u.hosts.front().port;
  } else {
    u.host = std::string(hostport);  // a host list (redlock, cluster, sentinel), as written
  }
  return u;
}

}  // namespace weave
