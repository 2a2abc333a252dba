// weave/config.h — where Weave's options come from.
//
// One URL serves every feature (locks, [[cache]], [[dedupe]]), and a feature
// may name its own (WEAVE_LOCK_URL, WEAVE_CACHE_URL, WEAVE_DEDUPE_URL, or
// configure_cache / configure_dedupe after configure()). One loader fills
// the options from, highest precedence first:
//   1. code: ConfigSources::code (lock fields), ConfigSources::url (every feature)
//   2. the environment: WEAVE_LOCK_URL, else WEAVE_URL (every feature)
//   3. a JSON file (ConfigSources::file, else the path in $WEAVE_CONFIG):
//      "lock": {"url": ...}, else the top-level "url" (every feature)
//   4. the defaults of LockOptions
// Within a source a feature's own URL wins; between sources, the higher one.
//
//   // weave.json: {"url": "redis://cache:6379/2", "lock": {"lease": "30s", "on_lost": "throw"}}
//   weave::configure({.file = "weave.json"});        // locks, cache and dedupe of this process use it
//   weave::LockOptions o = weave::load_lock_options({.file = "weave.json"});  // or read it
//
// JSON keys under "lock": url, lease (watchdog lease), renew_interval,
// on_lost ("throw" | "callback"), connect_timeout, command_timeout, pool_size,
// key_prefix (redis: namespace of every lock key, a non-empty string),
// queue_entry (how long a fair / write waiter's place in line lasts unrefreshed),
// key_grace (redis: how long a lock's fencing counter outlives its last lease).
// Durations are strings "250ms", "30s", "2min", "1h" or integer milliseconds.
// Any problem (unreadable file, bad JSON, unknown key, bad value, bad URL)
// throws weave::ConfigError naming the source and the problem.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "weave/lock.h"

namespace WEAVE_NAMESPACE {

// Lock settings a source may or may not say; unset fields fall through to
// the next source.
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
  bool environment = true;               // read WEAVE_LOCK_URL and WEAVE_CONFIG
};

// Merges the sources over LockOptions' defaults, then LockOptions::validate().
WEAVE_API LockOptions load_lock_options(const ConfigSources& sources = {});

// Loads every feature's options from the sources and makes them this
// process's defaults: configure_locks(load_lock_options(sources)), and the
// shared URL (code > WEAVE_URL > the file's "url") for the cache and dedupe
// libraries when they are linked (each with its defaults otherwise; their
// own WEAVE_*_URL wins). Throws ConfigError and keeps the previous defaults
// on a problem in the sources.
WEAVE_API void configure(const ConfigSources& sources = {});

// "250ms", "30s", "2min", "1h" -> milliseconds (the grammar of
// weave/duration.h). Throws ConfigError ("<what>: ...") on anything else.
WEAVE_API std::chrono::milliseconds parse_duration(std::string_view text, std::string_view what = "duration");

}  // namespace weave
