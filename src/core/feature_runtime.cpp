#include "core/feature_runtime.h"

#include "core/events.h"
#include "weave/url.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

void throw_unknown_scheme(std::string_view feature, const std::string& url, std::string_view scheme,
                          std::string_view known) {
  std::string message = std::string(feature) + " url '" + redact_url(url) + "': unknown scheme '" +
                        std::string(scheme) + "' (this program serves " + std::string(known) + ")";
  if (scheme == "redis" || scheme == "redis+cluster" || scheme == "redis+sentinel" ||
      scheme == "redlock")
    message += "; link Weave::redis (or Weave::weave) for " + std::string(scheme) + "://";
  throw ConfigError(message, "url");
}

void report_event(const EventHook& hook, EventKind kind, std::string_view feature, std::string_view key,
                  const std::exception& error, std::string_view context) noexcept {
  try {
    const auto* typed = dynamic_cast<const Error*>(&error);
    const Error wrapped(std::string(context) + ": " + error.what());
    emit_event(hook, Event{kind, feature, key, error.what(), typed ? *typed : wrapped, nullptr});
  } catch (...) {
    // building the event failed (no memory): nothing to report with
  }
}

}  // namespace weave::detail
