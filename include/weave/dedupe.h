// weave/dedupe.h — [[dedupe]]: a duplicate call is refused, or answered with
// the first call's result (docs/dedupe.md).
//
//   [[dedupe(key="submit:<req.client_id>:<req.nonce>", window=10s)]]
//   virtual Receipt submit(const Request& req);        // a duplicate within 10 s throws weave::DuplicateCall
//
//   [[dedupe(key="pay:<idempotency_key>", window=24h, on_duplicate=replay, wait=5s,
//            match="<order.id>:<order.cents>")]]
//   virtual Receipt pay(const std::string& idempotency_key, const Order& order);  // a duplicate gets the first Receipt
//
//   weave::configure_dedupe({.url = "redis://127.0.0.1:6379"});   // optional
//
// The first call claims the key in one atomic step; the claim is a lease
// renewed while the method runs, so a crashed caller blocks its key for one
// claim lease, not for the window. Its outcome is recorded for the window.
//
// A method body that runs long (or may be paused: SIGSTOP, a VM stall) asks
// whether it still holds the claim, as a locked method asks its Lease (both
// are a weave::HeldLease):
//
//   Receipt Shop::pay(const std::string& idempotency_key, const Order& order) {
//     const weave::DedupeClaim* claim = weave::current_dedupe_claim();
//     for (auto& step : steps) {
//       if (claim->stop_token().stop_requested())   // lost: a duplicate may be running it now
//         throw Abandoned();
//       step();
//     }
//     ...
//   }
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <optional>
#include <string>
#include <string_view>

#include "weave/event.h"
#include "weave/held_lease.h"

namespace WEAVE_NAMESPACE {

namespace detail {
class HeldClaim;
}

// The claim a running first call holds on its key: a lease like a lock's
// (weave/held_lease.h). The store keeps it for DedupeOptions::claim_lease and
// the renewer extends it every third of that while the method runs. It is
// lost when a renewal finds it gone (it ran out and another call may have
// claimed the key) or when its local deadline (the last renewal sent +
// claim_lease) has passed. Once lost, the call's outcome is not recorded (it
// would go over a newer call's), the call still returns its result or
// exception to its caller, and the loss is counted (DedupeStats::claims_lost)
// and reported to DedupeOptions::on_event as EventKind::lease_lost. Once the
// call has returned, its deadline no longer counts (a claim kept through
// share() stays as it was).
//
// A claim has no fencing token: a per-key counter would outlive the window
// (nothing of a call may). Owned by the running call and never moved:
// `const DedupeClaim*` stays valid until the guarded call returns (share()
// keeps it longer). Thread-safe.
class WEAVE_API DedupeClaim : public HeldLease {
 public:
  // The same claim as a std::shared_ptr: hand it to another thread that works
  // for the call, or keep it past the call's return.
  std::shared_ptr<const DedupeClaim> share() const;

 private:
  friend class detail::HeldClaim;  // the only implementation
  explicit DedupeClaim(detail::LeaseCore& core) noexcept : HeldLease(core) {}
  ~DedupeClaim() = default;
};

// The claim of the innermost first call running [[dedupe]] in the running
// call's context (weave/call_context.h: this thread's, or one carried to it),
// or null (outside a guarded method, or in a duplicate).
WEAVE_API const DedupeClaim* current_dedupe_claim() noexcept;
// The claim on `key` (rendered, without the prefix) in the running call's
// context, innermost first, or null.
WEAVE_API const DedupeClaim* current_dedupe_claim(std::string_view key) noexcept;

struct WEAVE_API DedupeOptions {
  // Its section in the configuration file and its environment variables
  // prefix (WEAVE_DEDUPE_<FIELD>): weave/config.h.
  static constexpr std::string_view config_section = "dedupe";
  // The store (weave::load_options() puts WEAVE_DEDUPE_URL, WEAVE_URL or the
  // file's url here: the one place that decides; this struct is taken as given).
  std::string url = "mem://";
  // A running call's claim lasts this long unless renewed (every third of
  // it, while the method runs): how long a crashed first caller blocks its key.
  std::chrono::milliseconds claim_lease{10'000};
  // The longest window= accepted (a longer one is a ConfigError at the call).
  std::chrono::milliseconds max_window{std::chrono::hours(24 * 30)};
  // Keys (rendered) longer than this are refused with a ConfigError naming them.
  std::size_t max_key_bytes = 4096;
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
  // Every stored key is "{<prefix><key>}".
  std::string key_prefix = "weave:dedupe:";
  // Told of claims lost while running (EventKind::lease_lost), failed
  // renewals and records the store could not write (dedupe_error); quick,
  // must not throw. Empty: the process's handler (weave::set_event_handler).
  EventHook on_event = {};

  // Throws weave::ConfigError naming the field for a value out of range.
  void validate() const;
};

// Process-wide counts since the configuration.
struct WEAVE_API DedupeStats {
  std::uint64_t first_calls = 0;        // claimed and ran
  std::uint64_t duplicates = 0;         // answered without running (any on_duplicate)
  std::uint64_t replays = 0;            // ... of which with the first call's result
  std::uint64_t waited = 0;             // duplicates that waited for a running first call
  std::uint64_t in_flight_refused = 0;  // DuplicateInFlight thrown
  std::uint64_t mismatches = 0;         // DedupeMismatch thrown
  std::uint64_t forgotten = 0;          // failed first calls that left no record (on_error=forget)
  std::uint64_t remembered = 0;         // failed first calls recorded (on_error=remember)
  std::uint64_t claims_lost = 0;        // the method ran but its claim had run out: outcome not recorded
  std::uint64_t errors = 0;             // store failures after the method ran (each also an Event)
};

// What the store keeps for one dedupe key (`weave dedupe show`).
struct WEAVE_API DedupeRecordInfo {
  enum class State { absent, running, done, failed, unreadable };
  State state = State::absent;
  std::string match;     // the first call's match text
  std::string result;    // done: its stored result as JSON ("" when not kept); failed: its error
  std::string owner;     // running: the claim's owner token
  std::chrono::milliseconds expires_in{0};  // the rest of the window (running: of the claim's lease)
  // done, failed: how long ago the outcome was recorded (none: unknown,
  // e.g. written by a Weave before this field existed).
  std::optional<std::chrono::milliseconds> age;
};
// For operators: the record of `key` (the rendered key, as in DuplicateCall
// messages) in the configured store. Read-only.
WEAVE_API DedupeRecordInfo inspect_dedupe(std::string_view key);

// Replaces the process-wide configuration. Throws ConfigError.
WEAVE_API void configure_dedupe(DedupeOptions options);
WEAVE_API DedupeStats dedupe_stats();

}  // namespace weave
