#include "core/option_check.h"

#include "weave/duration.h"
#include "weave/error.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE::detail {

namespace {
std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }
}  // namespace

void OptionCheck::fail(std::string_view field, std::string_view why) const {
  throw ConfigError(options_, std::string(field), std::string(why));
}

void OptionCheck::duration(std::string_view field, std::chrono::milliseconds d,
                           std::chrono::milliseconds at_least) const {
  if (d <= std::chrono::milliseconds(0)) fail(field, "must be > 0, got " + ms(d));
  if (d < at_least) fail(field, "must be at least " + ms(at_least) + ", got " + ms(d));
  if (d > max_duration) fail(field, "must be at most 10 years, got " + ms(d));
}

void OptionCheck::count(std::string_view field, long long value, long long lo, long long hi) const {
  if (value < lo || value > hi)
    fail(field, "must be " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(value));
}

void OptionCheck::store_settings(const std::string& url, std::chrono::milliseconds connect_timeout,
                                 std::chrono::milliseconds command_timeout, int pool_size,
                                 const std::string& key_prefix) const {
  try {
    parse_store_url(url);
  } catch (const ConfigError& e) {  // names the URL, its password masked
    throw ConfigError(e.problem(), "url");
  }
  duration("connect_timeout", connect_timeout);
  duration("command_timeout", command_timeout);
  count("pool_size", pool_size, 1, 1024);
  if (key_prefix.empty()) fail("key_prefix", "must not be empty");
}

}  // namespace weave::detail
