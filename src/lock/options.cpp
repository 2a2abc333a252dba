// LockOptions::validate: the one check of lock options, whatever filled them
// (code, the environment, a JSON file).
#include <string>

#include "internal.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE {
namespace detail {
// Throws ConfigError naming the URL and the known schemes (backends.cpp).
void require_known_scheme(const std::string& url, std::string_view scheme);
}  // namespace detail

namespace {

using std::chrono::milliseconds;

std::string ms(milliseconds d) { return std::to_string(d.count()) + " ms"; }

// A duration that must be > 0 and at most weave::max_duration.
void check_duration(const char* field, milliseconds d) {
  if (d <= milliseconds(0))
    throw ConfigError(std::string("LockOptions::") + field + " must be > 0, got " + ms(d));
  if (d > max_duration)
    throw ConfigError(std::string("LockOptions::") + field + " must be at most 10 years, got " + ms(d));
}

}  // namespace

void LockOptions::validate() const {
  detail::require_known_scheme(url, parse_store_url(url).scheme);
  detail::validate_values(*this);
}

namespace detail {

void validate_values(const LockOptions& o) {
  check_duration("watchdog_lease", o.watchdog_lease);
  // renew_interval <= 0 means the default, a third of the lease.
  if (o.renew_interval > milliseconds(0)) {
    check_duration("renew_interval", o.renew_interval);
    if (o.renew_interval >= o.watchdog_lease)
      throw ConfigError("LockOptions::renew_interval (" + ms(o.renew_interval) +
                        ") must be shorter than the lease (" + ms(o.watchdog_lease) + ")");
  }
  check_duration("connect_timeout", o.connect_timeout);
  check_duration("command_timeout", o.command_timeout);
  check_duration("queue_entry", o.queue_entry);
  check_duration("key_grace", o.key_grace);
  if (o.pool_size < 1 || o.pool_size > 1024)
    throw ConfigError("LockOptions::pool_size must be 1..1024, got " + std::to_string(o.pool_size));
  if (o.key_prefix.empty()) throw ConfigError("LockOptions::key_prefix must not be empty");
}

}  // namespace detail
}  // namespace weave
