// LockOptions::validate: the one check of lock options, whatever filled them
// (code, the environment, a JSON file).
#include <string>

#include "weave/duration.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace weave {
namespace detail {
// Throws ConfigError naming the URL and the known schemes (backends.cpp).
void require_known_scheme(const std::string& url, std::string_view scheme);
}  // namespace detail

namespace {

using std::chrono::milliseconds;

std::string ms(milliseconds d) { return std::to_string(d.count()) + " ms"; }

// A duration that must be > 0 (or >= 0) and at most weave::max_duration.
void check_duration(const char* field, milliseconds d, bool zero_ok = false) {
  if (d < milliseconds(0) || (d == milliseconds(0) && !zero_ok))
    throw ConfigError(std::string("LockOptions::") + field + " must be > 0, got " + ms(d));
  if (d > max_duration)
    throw ConfigError(std::string("LockOptions::") + field + " must be at most 10 years, got " + ms(d));
}

}  // namespace

void LockOptions::validate() const {
  detail::require_known_scheme(url, parse_lock_url(url).scheme);
  check_duration("watchdog_lease", watchdog_lease);
  // renew_interval <= 0 means the default, a third of the lease.
  if (renew_interval > milliseconds(0)) {
    check_duration("renew_interval", renew_interval);
    if (renew_interval >= watchdog_lease)
      throw ConfigError("LockOptions::renew_interval (" + ms(renew_interval) +
                        ") must be shorter than the lease (" + ms(watchdog_lease) + ")");
  }
  check_duration("connect_timeout", connect_timeout);
  check_duration("command_timeout", command_timeout);
  check_duration("queue_entry", queue_entry);
  if (pool_size < 1 || pool_size > 1024)
    throw ConfigError("LockOptions::pool_size must be 1..1024, got " + std::to_string(pool_size));
  if (key_prefix.empty()) throw ConfigError("LockOptions::key_prefix must not be empty");
}

}  // namespace weave
