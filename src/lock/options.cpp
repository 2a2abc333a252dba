// LockOptions::validate: the one check of lock options, whatever filled them
// (code, the environment, a JSON file).
#include <string>

#include "core/option_check.h"
#include "internal.h"
#include "weave/annotation.h"  // weave::forever
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

}  // namespace

void LockOptions::validate() const {
  detail::require_known_scheme(url, parse_store_url(url).scheme);
  detail::validate_values(*this);
}

namespace detail {

void validate_values(const LockOptions& o) {
  const OptionCheck check("LockOptions");
  check.store_settings(o.url, o.connect_timeout, o.command_timeout, o.pool_size, o.key_prefix);
  check.duration("watchdog_lease", o.watchdog_lease);
  // renew_interval <= 0 means the default, a third of the lease.
  if (o.renew_interval > milliseconds(0)) {
    check.duration("renew_interval", o.renew_interval);
    if (o.renew_interval >= o.watchdog_lease)
      check.fail("renew_interval", "(" + ms(o.renew_interval) + ") must be shorter than the lease (" +
                                       ms(o.watchdog_lease) + ")");
  }
  check.duration("queue_entry", o.queue_entry);
  if (o.starvation_after != forever) check.duration("starvation_after", o.starvation_after);
  check.duration("handoff_turn", o.handoff_turn);
  check.duration("key_grace", o.key_grace);
}

}  // namespace detail
}  // namespace weave
