// weave/config.h — where Weave's options come from.
//
// One loader fills every feature's options (LockOptions, CacheOptions,
// DedupeOptions, QueueOptions) from, highest precedence first:
//   1. code: ConfigSources::url (every feature's store), ConfigSources::code
//      (lock fields); or set fields of what load_options() returns
//   2. the environment: WEAVE_<FEATURE>_<FIELD> for any field
//      (WEAVE_CACHE_LOCAL_MAX_ENTRIES=5000, WEAVE_LOCK_URL=redis://...), and
//      WEAVE_URL for every feature's url
//   3. a JSON file (ConfigSources::file, else the path in $WEAVE_CONFIG): one
//      section per feature keyed by the options' field names, and a
//      top-level "url" for every feature
//   4. the options structs' defaults
// Within a source a feature's own url wins over the shared one.
//
//   // weave.json: {"url": "redis://cache:6379/2",
//   //              "lock": {"watchdog_lease": "30s"}, "cache": {"local_max_entries": 50000}}
//   weave::configure({.file = "weave.json"});        // every feature linked into the program
//   weave::CacheOptions c = weave::load_options<weave::CacheOptions>({.file = "weave.json"});
//   c.local_max_entries = 1000;                       // code over the sources
//   weave::configure_cache(c);
//
// Durations are strings "250ms", "30s", "2min", "1h" or integer milliseconds.
// Any problem (unreadable file, bad JSON, unknown key, bad value, bad URL)
// throws weave::ConfigError naming the source, the key ("cache.pool_size")
// and the problem; a URL's password never shows. docs/configuration.md lists
// every key; `weave config` prints the values in force and where each came from.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weave/lock.h"

namespace WEAVE_NAMESPACE {

// Lock fields code may set through ConfigSources::code (as setting them on
// what load_options<LockOptions>() returns); unset ones fall through to the
// other sources.
struct WEAVE_API LockConfig {
  std::optional<std::string> url = {};
  std::optional<std::chrono::milliseconds> lease = {};
  std::optional<std::chrono::milliseconds> renew_interval = {};
  std::optional<LeaseLostPolicy> on_lost = {};
  std::optional<std::chrono::milliseconds> connect_timeout = {};
  std::optional<std::chrono::milliseconds> command_timeout = {};
  std::optional<int> pool_size = {};
  std::optional<std::string> key_prefix = {};
  std::optional<std::chrono::milliseconds> queue_entry = {};
  std::optional<std::chrono::milliseconds> key_grace = {};
  std::optional<std::chrono::milliseconds> starvation_after = {};
  std::optional<std::chrono::milliseconds> handoff_turn = {};
};

struct WEAVE_API ConfigSources {
  std::optional<std::string> url = {};   // every feature's URL unless its own is set (code)
  LockConfig code = {};                  // highest precedence
  std::optional<std::string> file = {};  // JSON file; when unset, $WEAVE_CONFIG (if set)
  bool environment = true;               // read WEAVE_<FEATURE>_<FIELD>, WEAVE_URL and WEAVE_CONFIG
};

namespace detail {
// Fills `options` (a default-made options struct of `feature`) from the
// sources and validates it (src/core/config.cpp).
WEAVE_API void load_feature_options(std::string_view feature, void* options, const ConfigSources& sources);
}  // namespace detail

// One feature's options from the sources, validated: CacheOptions,
// DedupeOptions, QueueOptions, LockOptions (its library linked).
template <class Options>
Options load_options(const ConfigSources& sources = {}) {
  Options options;
  detail::load_feature_options(Options::config_section, &options, sources);
  return options;
}

// load_options<LockOptions>, with ConfigSources::code on top.
WEAVE_API LockOptions load_lock_options(const ConfigSources& sources = {});

// Loads the options of every feature linked into the program and makes them
// this process's defaults (configure_locks, configure_cache,
// configure_dedupe, configure_queues). Nothing changes when any source has
// a problem: ConfigError.
WEAVE_API void configure(const ConfigSources& sources = {});

// One option in force: its key ("cache.pool_size"), its value as the file
// would say it ("7s", 4, "redis://u:***@host:6379": passwords masked), and
// where it came from ("default", "config file 'weave.json'", "environment
// WEAVE_CACHE_POOL_SIZE", "code").
struct WEAVE_API ConfigSetting {
  std::string key, value, origin;
};
// Every option of every feature linked into the program, as load_options()
// would load it, in the features' order and each feature's fields' order.
WEAVE_API std::vector<ConfigSetting> effective_config(const ConfigSources& sources = {});

// "250ms", "30s", "2min", "1h" -> milliseconds (the grammar of
// weave/duration.h). Throws ConfigError ("<what>: ...") on anything else.
WEAVE_API std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what = "duration");

}  // namespace weave
