// LockOptions::validate: the one check of lock options, whatever filled them
// (code, the environment, a JSON file).
#include <string>

#include "core/feature_config.h"
#include "core/option_check.h"
#include "internal.h"
#include "weave/annotation.h"  // weave::forever
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE {
namespace detail {
// Throws ConfigError naming the URL when no linked library serves its scheme (backends.cpp).
void check_lock_scheme(const std::string& url);
}  // namespace detail

namespace {

using std::chrono::milliseconds;

std::string ms(milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

void LockOptions::validate() const {
  detail::validate_values(*this);  // the URL's form first (OptionCheck::store_settings)
  detail::check_lock_scheme(url);
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
namespace {

// ConfigSources::code: the fields it sets, over every other source.
void code_layer(void* options, const ConfigSources& sources, std::vector<std::string>& set) {
  LockOptions& o = *static_cast<LockOptions*>(options);
  const LockConfig& c = sources.code;
  auto take = [&](auto& field, const auto& value, const char* name) {
    if (!value) return;
    field = *value;
    set.emplace_back(name);
  };
  take(o.url, c.url, "url");
  take(o.watchdog_lease, c.lease, "watchdog_lease");
  take(o.renew_interval, c.renew_interval, "renew_interval");
  take(o.lost_policy, c.on_lost, "lost_policy");
  take(o.connect_timeout, c.connect_timeout, "connect_timeout");
  take(o.command_timeout, c.command_timeout, "command_timeout");
  take(o.pool_size, c.pool_size, "pool_size");
  take(o.key_prefix, c.key_prefix, "key_prefix");
  take(o.queue_entry, c.queue_entry, "queue_entry");
  take(o.key_grace, c.key_grace, "key_grace");
  take(o.starvation_after, c.starvation_after, "starvation_after");
  take(o.handoff_turn, c.handoff_turn, "handoff_turn");
}

detail::FeatureConfig lock_config() {
  using detail::also_read_as;
  using detail::option;
  using O = LockOptions;
  detail::FeatureConfig f = detail::describe(
      detail::with_store_options<O>({
          also_read_as(option("watchdog_lease", &O::watchdog_lease), "lease"),
          option("renew_interval", &O::renew_interval),
          also_read_as(option("lost_policy", &O::lost_policy,
                              {{"throw_at_release", LeaseLostPolicy::throw_at_release},
                               {"callback", LeaseLostPolicy::callback},
                               {"throw", LeaseLostPolicy::throw_at_release}}),
                       "on_lost"),
          option("release_failure_policy", &O::release_failure_policy,
                 {{"report", ReleaseFailurePolicy::report}, {"throw_error", ReleaseFailurePolicy::throw_error}}),
          option("key_grace", &O::key_grace),
          option("queue_entry", &O::queue_entry),
          option("starvation_after", &O::starvation_after, /*forever_ok=*/true),
          option("handoff_turn", &O::handoff_turn),
      }),
      &configure_locks);
  f.code = &code_layer;
  return f;
}

[[maybe_unused]] const bool lock_config_registered = detail::register_feature_config(lock_config());

}  // namespace

LockOptions load_lock_options(const ConfigSources& sources) { return load_options<LockOptions>(sources); }

}  // namespace weave
