// weave/event.h — what the library has to tell: one hook for every feature.
//
// Failures that are not thrown (a lock not given back after its method
// completed, a lease lost while its method ran, a cache that could not be
// read), failures that are thrown but worth a line in the log, and changes
// an operator wants to see (a connection that works again, a failover that
// was followed, a dead-lettered message) are Events. Each goes to the
// process's event handler; by default it writes one line to stderr:
//
//   weave: error: lock "acct:7": lease_lost: weave: lock "acct:7": lease lost: ...
//
// Replace it once, at start-up, to send events to your own log:
//
//   weave::set_event_handler([](const weave::Event& e) {
//     log(e.level(), "weave {} {}: {}", e.feature, weave::to_string(e.kind), e.error.what());
//   });
//   weave::set_event_handler({});   // or: drop every event
//
// A feature's options may name their own hook (LockOptions::on_event, ...):
// that feature's events then go there instead. The library writes nothing
// to stdout or stderr other than through the default handler.
#pragma once

#include "weave/abi.h"

#include <functional>
#include <string>
#include <string_view>

namespace WEAVE_NAMESPACE {

class Error;
class HeldLease;
class Lease;

enum class EventKind {
  release_failed,     // warning: a lease was not given back (store error); it runs out by itself
  lease_lost,         // error: a lease of any feature (a lock's, a dedupe claim, a cache fill, a
                      // queue delivery) was lost while held: ran out, taken, not renewed, past
                      // max_hold; error is a weave::LeaseLost
  cache_error,        // warning: the cache could not be read or written; the method ran (or its
                      // result was returned) anyway; key: "cache name/key"
  dedupe_error,       // error: [[dedupe]]: the method ran but the store failed to record its outcome
  renewal_failed,     // warning: a lease's renewal could not reach the store; it is retried and the
                      // lease holds until its deadline (lease_lost follows if it passes)
  reconnected,        // info: a store node answers again after its connection failed (key: the node)
  failover_followed,  // warning: a new master is used (a Sentinel switch, a cluster slot owner after
                      // its node failed); key: the new master, cause: the old one
  feed_gap,           // warning: the cache's invalidation feed was down: every local copy was dropped
  dead_lettered,      // error: a queue message was dead-lettered (retries spent, or by its handler);
                      // key: "queue/message id", cause: its last error
  quota_error,        // warning: a rate limit's store failed and on_store_error=allow let the call
                      // run unlimited; key: the limited key
  circuit_opened,     // warning: a circuit breaker opened (its window over a threshold, or a probe
                      // failed): its calls are refused for open_for; key: the breaker's name
  circuit_half_open,  // info: an open breaker lets its probe calls through
  circuit_closed,     // info: a half-open breaker's probes passed: calls go through again
  circuit_store_error,  // warning: a shared breaker's store failed (or its feed is behind): each
                        // process decides on its local breaker until it answers; key: the breaker
};

// How much an operator should care; the default handler writes it first.
enum class EventLevel { info, warning, error };

constexpr EventLevel level_of(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::reconnected:
    case EventKind::circuit_half_open:
    case EventKind::circuit_closed: return EventLevel::info;
    case EventKind::release_failed:
    case EventKind::cache_error:
    case EventKind::renewal_failed:
    case EventKind::failover_followed:
    case EventKind::feed_gap:
    case EventKind::quota_error:
    case EventKind::circuit_opened:
    case EventKind::circuit_store_error: return EventLevel::warning;
    case EventKind::lease_lost:
    case EventKind::dedupe_error:
    case EventKind::dead_lettered: return EventLevel::error;
  }
  return EventLevel::error;
}

inline std::string_view to_string(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::release_failed: return "release_failed";
    case EventKind::lease_lost: return "lease_lost";
    case EventKind::cache_error: return "cache_error";
    case EventKind::dedupe_error: return "dedupe_error";
    case EventKind::renewal_failed: return "renewal_failed";
    case EventKind::reconnected: return "reconnected";
    case EventKind::failover_followed: return "failover_followed";
    case EventKind::feed_gap: return "feed_gap";
    case EventKind::dead_lettered: return "dead_lettered";
    case EventKind::quota_error: return "quota_error";
    case EventKind::circuit_opened: return "circuit_opened";
    case EventKind::circuit_half_open: return "circuit_half_open";
    case EventKind::circuit_closed: return "circuit_closed";
    case EventKind::circuit_store_error: return "circuit_store_error";
  }
  return "unknown";
}

inline std::string_view to_string(EventLevel level) noexcept {
  switch (level) {
    case EventLevel::info: return "info";
    case EventLevel::warning: return "warning";
    case EventLevel::error: return "error";
  }
  return "unknown";
}

struct WEAVE_API Event {
  EventKind kind;
  std::string_view feature;  // "lock", "cache", "dedupe", "queue", "quota", "store", "circuit_breaker"
  std::string_view key;      // the key concerned
  std::string_view cause;    // why, in words (e.g. the backend's error text)
  const Error& error;        // the typed error that is (or, by policy, is not) thrown; names the key
  const Lease* lease;        // lock events: the lease concerned; else null
  // lease_lost, of every feature: the lease that was lost (a lock's Lease,
  // a dedupe claim); release_failed: the lock's lease. Else null.
  const HeldLease* held_lease = nullptr;

  EventLevel level() const noexcept { return level_of(kind); }
};

// May be called from several threads at once (the releasing thread, the
// lock's notifier thread). Must be quick and must not throw (an exception is
// dropped: there is nobody to hand it to). Event's views last for the call.
using EventHook = std::function<void(const Event&)>;

// Makes `handler` the process's event handler (thread-safe; events already
// being handled finish with the old one). An empty hook drops every event.
WEAVE_API void set_event_handler(EventHook handler);

// The default handler: one line on stderr (one write, so lines of threads
// never interleave), `weave: <level>: <feature> "<key>": <kind>: <what>`;
// at most 10 lines a second of each kind, the next line saying how many of
// its kind were left out (a store outage is not a line per call).
WEAVE_API void write_event_to_stderr(const Event& event) noexcept;

// That line without its newline, for handlers that add it to their own log.
WEAVE_API std::string event_line(const Event& event);

}  // namespace weave
