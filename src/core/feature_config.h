// A feature's options as the one loader (src/core/config.cpp) reads them:
// each feature library describes its options struct once, with one entry per
// field, and registers the description when it is linked. The loader then
// reads the feature's section of the JSON file, its environment variables
// (WEAVE_<FEATURE>_<FIELD>) and the code's sources for every feature alike,
// and weave::configure() hands each feature its options.
//
//   // src/cache/cache_runtime.cpp
//   const bool described = register_feature_config(describe(
//       with_store_options<CacheOptions>({option("local_max_entries", &CacheOptions::local_max_entries),
//                                         option("fill_lease", &CacheOptions::fill_lease), ...}),
//       &configure_cache));
//
// A field's reader checks the value's form (a duration, an integer that
// fits, a string); its range is the options' validate()'s to check
// (OptionCheck names the field, and the loader names where the value came from).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "weave/abi.h"
#include "weave/config.h"

namespace WEAVE_NAMESPACE::detail {

// Thrown by a field's reader: what is wrong with the value (the loader adds
// the source and the key path).
struct BadValue {
  std::string why;
};

// One option: its JSON key (the field's name) and older spellings still
// read, how to read it and how to show it in the file's syntax.
struct OptionField {
  std::string name;
  std::vector<std::string> aliases;
  // The environment variable's text as JSON: a number for a numeric field,
  // else the text as a string.
  bool numeric = false;
  std::function<void(void* options, const nlohmann::json& value)> read;  // throws BadValue
  std::function<nlohmann::json(const void* options)> show;
  bool is_url = false;  // shown with its password masked; the shared url (file "url", WEAVE_URL) fills it
};

struct FeatureConfig {
  std::string name;  // "cache": the JSON section, WEAVE_CACHE_<FIELD>
  std::vector<OptionField> fields;
  std::function<std::shared_ptr<void>()> make_default;
  std::function<void(void* to, const void* from)> assign;
  std::function<void(const void* options)> validate;  // throws ConfigError (OptionCheck)
  std::function<void(const void* options)> apply;     // configure_<feature>(options)
  // The code's own layer, if the feature has one besides ConfigSources::url
  // (the lock: ConfigSources::code): sets fields of `options` and adds
  // their names to `set`.
  std::function<void(void* options, const ConfigSources& sources, std::vector<std::string>& set)> code{};
};

// From a library's static initialisation; returns true.
bool register_feature_config(FeatureConfig config);
// Every registered feature, in the order `weave config` shows them.
std::vector<FeatureConfig> registered();

// Durations: "30s" (weave/duration.h) or integer milliseconds; `forever_ok`:
// also "forever" (weave::forever).
std::chrono::milliseconds read_duration(const nlohmann::json& v, bool forever_ok);
nlohmann::json show_duration(std::chrono::milliseconds d);

template <class Options>
OptionField option(std::string name, std::chrono::milliseconds Options::*field, bool forever_ok = false) {
  OptionField f{std::move(name), {}, false, {}, {}, false};
  f.read = [field, forever_ok](void* o, const nlohmann::json& v) {
    static_cast<Options*>(o)->*field = read_duration(v, forever_ok);
  };
  f.show = [field](const void* o) { return show_duration(static_cast<const Options*>(o)->*field); };
  return f;
}

template <class Options, class Int>
  requires std::is_integral_v<Int>
OptionField option(std::string name, Int Options::*field) {
  OptionField f{std::move(name), {}, true, {}, {}, false};
  f.read = [field](void* o, const nlohmann::json& v) {
    if (!v.is_number_integer() || (v.is_number_unsigned() ? v.get<std::uint64_t>() > std::numeric_limits<Int>::max()
                                                           : v.get<std::int64_t>() < 0))
      throw BadValue{"expected an integer 0.." + std::to_string(std::numeric_limits<Int>::max()) + ", got " +
                     v.dump()};
    static_cast<Options*>(o)->*field = static_cast<Int>(v.get<std::uint64_t>());
  };
  f.show = [field](const void* o) { return nlohmann::json(static_cast<const Options*>(o)->*field); };
  return f;
}

template <class Options>
OptionField option(std::string name, std::string Options::*field) {
  const bool url = name == "url";
  OptionField f{std::move(name), {}, false, {}, {}, url};
  f.read = [field](void* o, const nlohmann::json& v) {
    if (!v.is_string()) throw BadValue{"expected a string, got " + v.dump()};
    static_cast<Options*>(o)->*field = v.get<std::string>();
  };
  f.show = [field](const void* o) { return nlohmann::json(static_cast<const Options*>(o)->*field); };
  return f;
}

// An enum read and shown by the names in `names` ({name, value}, the first
// name of a value is the one shown).
template <class Options, class Enum>
  requires std::is_enum_v<Enum>
OptionField option(std::string name, Enum Options::*field, std::vector<std::pair<std::string, Enum>> names) {
  OptionField f{std::move(name), {}, false, {}, {}, false};
  f.read = [field, names](void* o, const nlohmann::json& v) {
    std::string known;
    for (const auto& [text, value] : names) {
      if (v.is_string() && v.get<std::string>() == text) {
        static_cast<Options*>(o)->*field = value;
        return;
      }
      known += (known.empty() ? "\"" : ", \"") + text + "\"";
    }
    throw BadValue{"expected one of " + known + ", got " + v.dump()};
  };
  f.show = [field, names](const void* o) {
    for (const auto& [text, value] : names)
      if (value == static_cast<const Options*>(o)->*field) return nlohmann::json(text);
    return nlohmann::json();
  };
  return f;
}

// Adds an older spelling the file may still use ("lease" for watchdog_lease).
inline OptionField also_read_as(OptionField f, std::string alias) {
  f.aliases.push_back(std::move(alias));
  return f;
}

// A store-backed feature's fields: url, then `own`, then the connection's
// settings (OptionCheck::store_settings checks them).
template <class Options>
std::vector<OptionField> with_store_options(std::vector<OptionField> own) {
  std::vector<OptionField> fields{option("url", &Options::url)};
  fields.insert(fields.end(), own.begin(), own.end());
  fields.push_back(option("connect_timeout", &Options::connect_timeout));
  fields.push_back(option("command_timeout", &Options::command_timeout));
  fields.push_back(option("pool_size", &Options::pool_size));
  fields.push_back(option("key_prefix", &Options::key_prefix));
  return fields;
}

template <class Options>
FeatureConfig describe(std::vector<OptionField> fields, void (*apply)(Options)) {
  static_assert(!Options::config_section.empty());
  return {std::string(Options::config_section),
          std::move(fields),
          [] { return std::make_shared<Options>(); },
          [](void* to, const void* from) { *static_cast<Options*>(to) = *static_cast<const Options*>(from); },
          [](const void* o) { static_cast<const Options*>(o)->validate(); },
          [apply](const void* o) { apply(*static_cast<const Options*>(o)); }};
}

}  // namespace weave::detail
