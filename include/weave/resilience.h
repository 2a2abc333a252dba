// weave/resilience.h — where shared circuit breakers keep their state
// (weave/circuit_breaker.h, `shared = true`): one store for the process,
// configured like every feature's (weave/config.h).
//
//   weave::configure_resilience({.url = "redis://127.0.0.1:6379"});   // optional
//   // or WEAVE_RESILIENCE_URL, WEAVE_URL, or the "resilience" section of $WEAVE_CONFIG
//
// mem:// (the default) shares a breaker between the runtimes of this
// process only; a Redis URL shares it with every process of the deployment:
// the store adds up their outcomes, decides on its own clock, and tells
// every process of each change. Retry, timeout, bulkhead and breakers that
// are not shared never touch a store.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "weave/abi.h"
#include "weave/event.h"

namespace WEAVE_NAMESPACE {

struct WEAVE_API ResilienceOptions {
  // Its section in the configuration file and its environment variables'
  // prefix (WEAVE_RESILIENCE_<FIELD>): weave/config.h.
  static constexpr std::string_view config_section = "resilience";
  // The store (weave::load_options() puts WEAVE_RESILIENCE_URL, WEAVE_URL or
  // the file's url here: the one place that decides).
  std::string url = "mem://";
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
  // A shared breaker's record is "{<prefix>cb:<name>}"; its changes are
  // published on "{<prefix>cb}" (one channel for all).
  std::string key_prefix = "weave:resilience:";
  // How often a process sends the outcomes it counted since its last report
  // (a closed breaker's calls themselves never wait for the store).
  std::chrono::milliseconds flush_interval{50};
  // How far behind the store's change feed may be while a process still
  // trusts the state it cached from it; past this (or with the store
  // unreachable) each process decides on its own local breaker.
  std::chrono::milliseconds feed_lag{100};
  // Told of store failures a caller did not see (a report that failed, a
  // breaker falling back to its local state); quick, must not throw. Empty:
  // the process's handler (weave::set_event_handler).
  EventHook on_event = {};
  // Throws weave::ConfigError naming the field for a value out of range.
  void validate() const;
};

// The options for the process-wide resilience store from now on (validated
// here: ConfigError). Shared breakers made before keep the store they were
// made with.
WEAVE_API void configure_resilience(ResilienceOptions options);

}  // namespace weave
