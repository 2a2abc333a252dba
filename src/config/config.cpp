// Lock configuration: code > WEAVE_LOCK_URL > JSON file > defaults.
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/builtin.h"
#include "weave/config.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/json_codec.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE {
namespace detail {
// Throws ConfigError naming the URL and the known schemes (src/lock/backends.cpp).
void require_known_scheme(const std::string& url, std::string_view scheme);
}

using std::chrono::milliseconds;

milliseconds parse_duration(std::string_view text, std::string_view what) {
  const DurationParse d = parse_duration_text(text);
  if (!d) throw ConfigError(std::string(what) + ": '" + std::string(text) + "': " + d.error);
  return d.value;
}


namespace {

void check_url(const std::string& url, const std::string& source) {
  try {
    detail::require_known_scheme(url, parse_store_url(url).scheme);
  } catch (const ConfigError& e) {
    std::string what = e.what();
    const std::string prefix = "weave config: ";
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    throw ConfigError(source + ": " + what);
  }
}

// Overlays `over` on `base` (set fields win).
void overlay(LockConfig& base, const LockConfig& over) {
  if (over.url) base.url = over.url;
  if (over.lease) base.lease = over.lease;
  if (over.renew_interval) base.renew_interval = over.renew_interval;
  if (over.on_lost) base.on_lost = over.on_lost;
  if (over.connect_timeout) base.connect_timeout = over.connect_timeout;
  if (over.command_timeout) base.command_timeout = over.command_timeout;
  if (over.pool_size) base.pool_size = over.pool_size;
  if (over.key_prefix) base.key_prefix = over.key_prefix;
  if (over.queue_entry) base.queue_entry = over.queue_entry;
  if (over.key_grace) base.key_grace = over.key_grace;
  if (over.starvation_after) base.starvation_after = over.starvation_after;
  if (over.handoff_turn) base.handoff_turn = over.handoff_turn;
}

LockConfig read_file(const std::string& path, const std::string& source) {
  std::ifstream in(path);
  if (!in) throw ConfigError(source + ": cannot read '" + path + "'");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  // A value nested this deep is refused before parsing: the error of a bad
  // value prints it (dump(), which recurses once per level).
  if (detail::json_deeper_than(text, detail::kMaxJsonDepth))
    throw ConfigError(source + ": bad JSON: nested more than " + std::to_string(detail::kMaxJsonDepth) +
                      " levels deep");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1E400
    throw ConfigError(source + ": bad JSON: " + e.what());
  }
  if (!j.is_object()) throw ConfigError(source + ": expected a JSON object at the top");
  LockConfig c;
  for (auto& [k, v] : j.items())
    if (k != "lock" && k != "url") throw ConfigError(source + ": unknown key '" + k + "' (known: url, lock)");
  // The top-level url serves every feature; "lock.url" (below) overrides it for locks.
  if (j.contains("url")) {
    if (!j["url"].is_string()) throw ConfigError(source + ": url: expected a string");
    c.url = j["url"].get<std::string>();
    check_url(*c.url, source + ": url");
  }
  if (!j.contains("lock")) return c;
  const nlohmann::json& lock = j["lock"];
  if (!lock.is_object()) throw ConfigError(source + ": 'lock' must be an object");

  auto duration = [&](const std::string& k, const nlohmann::json& v) {
    const std::string what = source + ": lock." + k;
    if (v.is_number_unsigned()) return milliseconds(v.get<std::uint64_t>());
    if (v.is_string()) return parse_duration(v.get<std::string>(), what);
    throw ConfigError(what + ": expected a duration like \"30s\" or integer milliseconds");
  };
  for (auto& [k, v] : lock.items()) {
    const std::string what = source + ": lock." + k;
    if (k == "url") {
      if (!v.is_string()) throw ConfigError(what + ": expected a string");
      c.url = v.get<std::string>();
    } else if (k == "lease") {
      c.lease = duration(k, v);
    } else if (k == "renew_interval") {
      c.renew_interval = duration(k, v);
    } else if (k == "connect_timeout") {
      c.connect_timeout = duration(k, v);
    } else if (k == "command_timeout") {
      c.command_timeout = duration(k, v);
    } else if (k == "queue_entry") {
      c.queue_entry = duration(k, v);
    } else if (k == "key_grace") {
      c.key_grace = duration(k, v);
    } else if (k == "starvation_after") {
      c.starvation_after = v.is_string() && v.get<std::string>() == "forever" ? forever : duration(k, v);
    } else if (k == "handoff_turn") {
      c.handoff_turn = duration(k, v);
    } else if (k == "on_lost") {
      const std::string s = v.is_string() ? v.get<std::string>() : "";
      if (s == "throw")
        c.on_lost = LeaseLostPolicy::throw_at_release;
      else if (s == "callback")
        c.on_lost = LeaseLostPolicy::callback;
      else
        throw ConfigError(what + ": expected \"throw\" or \"callback\", got " + v.dump());
    } else if (k == "pool_size") {
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 || v.get<std::uint64_t>() > 1024)
        throw ConfigError(what + ": expected an integer 1..1024");
      c.pool_size = static_cast<int>(v.get<std::uint64_t>());
    } else if (k == "key_prefix") {
      if (!v.is_string() || v.get<std::string>().empty())
        throw ConfigError(what + ": expected a non-empty string");
      c.key_prefix = v.get<std::string>();
    } else {
      throw ConfigError(source + ": unknown key 'lock." + k +
                        "' (known: url, lease, renew_interval, on_lost, connect_timeout, "
                        "command_timeout, pool_size, key_prefix, queue_entry, key_grace, starvation_after, "
                        "handoff_turn)");
    }
  }
  if (c.url && lock.contains("url")) check_url(*c.url, source + ": lock.url");
  return c;
}

}  // namespace

LockOptions load_lock_options(const ConfigSources& sources) {
  LockConfig merged;
  // 3. the file
  std::optional<std::string> path = sources.file;
  std::string file_source;
  if (path) {
    file_source = "config file '" + *path + "'";
  } else if (sources.environment) {
    if (const char* p = std::getenv("WEAVE_CONFIG"); p && *p) {
      path = p;
      file_source = "config file '" + *path + "' (from WEAVE_CONFIG)";
    }
  }
  if (path) overlay(merged, read_file(*path, file_source));
  // 2. the environment: WEAVE_LOCK_URL, else WEAVE_URL (every feature)
  if (sources.environment) {
    for (const char* name : {"WEAVE_LOCK_URL", "WEAVE_URL"})
      if (const char* u = std::getenv(name); u && *u) {
        check_url(u, std::string("environment ") + name);
        merged.url = std::string(u);
        break;
      }
  }
  // 1. code: code.url, else url (every feature)
  LockConfig code = sources.code;
  if (!code.url && sources.url) code.url = sources.url;
  if (code.url)
    check_url(*code.url, sources.code.url ? "code (ConfigSources::code.url)" : "code (ConfigSources::url)");
  overlay(merged, code);

  LockOptions o;
  if (merged.url) o.url = *merged.url;
  if (merged.lease) o.watchdog_lease = *merged.lease;
  if (merged.renew_interval) o.renew_interval = *merged.renew_interval;
  if (merged.on_lost) o.lost_policy = *merged.on_lost;
  if (merged.connect_timeout) o.connect_timeout = *merged.connect_timeout;
  if (merged.command_timeout) o.command_timeout = *merged.command_timeout;
  if (merged.pool_size) o.pool_size = *merged.pool_size;
  if (merged.key_prefix) o.key_prefix = *merged.key_prefix;
  if (merged.queue_entry) o.queue_entry = *merged.queue_entry;
  if (merged.key_grace) o.key_grace = *merged.key_grace;
  if (merged.starvation_after) o.starvation_after = *merged.starvation_after;
  if (merged.handoff_turn) o.handoff_turn = *merged.handoff_turn;
  o.validate();
  return o;
}

namespace {

// The URL every feature shares: code (ConfigSources::url) > WEAVE_URL > the
// file's top-level "url"; "" when none says.
std::string shared_url(const ConfigSources& sources) {
  if (sources.url) return *sources.url;
  if (sources.environment)
    if (const char* u = std::getenv("WEAVE_URL"); u && *u) return u;
  std::optional<std::string> path = sources.file;
  if (!path && sources.environment)
    if (const char* p = std::getenv("WEAVE_CONFIG"); p && *p) path = p;
  if (!path) return "";
  std::ifstream in(*path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("url") && j["url"].is_string() ? j["url"].get<std::string>() : "";
}

}  // namespace

void configure(const ConfigSources& sources) {
  LockOptions locks = load_lock_options(sources);  // checks the sources (file, JSON, URLs) first
  const std::string url = shared_url(sources);
  configure_locks(std::move(locks));
  detail::configure_feature_urls(url);  // the cache and dedupe libraries, when linked
}

}  // namespace weave
