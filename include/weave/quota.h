// weave/quota.h — where rate limits (weave/rate_limit.h) and semaphores
// (weave/semaphore.h) keep their state:
// one store for the process, configured like every feature's (weave/config.h).
//
//   weave::configure_quota({.url = "redis://127.0.0.1:6379"});   // optional
//   // or WEAVE_QUOTA_URL, WEAVE_URL, or the "quota" section of $WEAVE_CONFIG
//
// mem:// (the default) keeps the state in this process; a Redis URL shares it
// with every process of the deployment, and every decision is taken by the
// server, on the server's clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weave/abi.h"
#include "weave/event.h"

namespace WEAVE_NAMESPACE {

struct WEAVE_API QuotaOptions {
  // Its section in the configuration file and its environment variables'
  // prefix (WEAVE_QUOTA_<FIELD>): weave/config.h.
  static constexpr std::string_view config_section = "quota";
  // The store (weave::load_options() puts WEAVE_QUOTA_URL, WEAVE_URL or the
  // file's url here: the one place that decides; this struct is taken as given).
  std::string url = "mem://";
  // Keys longer than this are refused with a UsageError naming them.
  std::size_t max_key_bytes = 4096;
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
  // Every stored key starts "{<prefix>rate:<key>}" or "{<prefix>sem:<key>}".
  std::string key_prefix = "weave:quota:";
  // How long the store keeps a semaphore permit from its grant or last
  // renewal (renewed every third of it while held): what a holder that
  // died costs the others at most.
  std::chrono::milliseconds permit_lease{30'000};
  // How long a waiting caller's place in a semaphore's line lasts (it asks
  // again every third of it): what a waiter that died holds the line up.
  std::chrono::milliseconds line_place{3'000};
  // Told of store failures a caller did not see (none yet); quick, must not
  // throw. Empty: the process's handler (weave::set_event_handler).
  EventHook on_event = {};
  // Throws weave::ConfigError naming the field for a value out of range.
  void validate() const;
};

// Process-wide counts since the configuration.
struct WEAVE_API QuotaStats {
  std::uint64_t admitted = 0;  // rate-limited calls let through (after a wait or not)
  std::uint64_t waited = 0;    // ... of which waited for their turn first
  std::uint64_t limited = 0;   // refused (weave::RateLimited, or skipped)
  std::uint64_t errors = 0;    // the store failed (the caller got the error)
  // Semaphores:
  std::uint64_t permits_acquired = 0;   // granted (after a wait or not)
  std::uint64_t permits_waited = 0;     // ... of which waited in line first
  std::uint64_t permits_busy = 0;       // none came free within the wait
  std::uint64_t permits_released = 0;   // given back (lost ones included)
  std::uint64_t permits_lost = 0;       // lost while held (ran out, or dropped by the store)
  std::uint64_t permits_reclaimed = 0;  // dead holders' permits taken back by this process's requests
  std::uint64_t permit_errors = 0;      // the store failed
};

// The options for the process-wide quota store from now on (validated here:
// ConfigError). Calls in flight finish with the store they began with.
WEAVE_API void configure_quota(QuotaOptions options);
WEAVE_API QuotaStats quota_stats();

}  // namespace weave
