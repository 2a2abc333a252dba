// The process-wide state of [[dedupe]]: options, the claim store for the
// URL, counters, and the running calls' claims (core leases it renews).
#pragma once

#include <unordered_map>
#include <mutex>
#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/call_context.h"
#include "core/feature_runtime.h"
#include "core/key_hash.h"
#include "core/lease_core.h"
#include "core/metrics.h"
#include "core/striped.h"
#include "core/unique_token.h"
#include "dedupe/claim_store.h"
#include "weave/dedupe.h"

namespace WEAVE_NAMESPACE::detail {

// One stripe of DedupeStats' counters, on a cache line of its own.
struct alignas(64) DedupeCounterStripe {
  std::atomic<std::uint64_t> first_calls{0}, duplicates{0}, replays{0}, waited{0}, in_flight_refused{0},
      mismatches{0}, forgotten{0}, remembered{0}, claims_lost{0}, errors{0};
};
using DedupeCounters = StripedCounters<DedupeCounterStripe>;

// weave_dedupe_* of one key template (weave/metrics.h), for the whole
// process; every count goes here and to the runtime's DedupeStats at once
// (DedupeRuntime::count).
struct DedupeSeries {
  DedupeCounters counts;
  DurationHistogram wait;  // duplicates that waited for a running first call, until answered or refused
};
DedupeSeries& dedupe_series(std::string_view key_template);

class DedupeRuntime;

// A running call's claim (weave::DedupeClaim): a core lease (renewed by the
// one Renewer through its runtime, lost like every lease) and the call's
// match text. Made by DedupeRuntime::hold, always through std::shared_ptr.
class HeldClaim final : public LeaseCore,
                                  public DedupeClaim,
                                  public std::enable_shared_from_this<HeldClaim> {
 public:
  using Clock = std::chrono::steady_clock;
  // Renewed by `runtime` once DedupeRuntime::hold watches it (null: never,
  // a fixed ttl). `sent`: when
  // the claim was sent (the store's lease started after it); `in_process`:
  // the store shares this clock (no drift margin).
  HeldClaim(std::string_view key, std::string owner, std::string_view match, std::chrono::milliseconds lease,
            Clock::time_point sent, bool in_process, DedupeSeries& series,
            std::shared_ptr<const RenewGroup> runtime);
  ~HeldClaim() = default;
  // Both bases answer these; the core's are the same, minus the view's const.
  using LeaseCore::expires_at;
  using LeaseCore::renewed;
  using LeaseCore::stop_token;
  const std::string& match() const noexcept { return match_; }
  // The claim as the head of the call's context, on `parent` (the context it
  // runs in). Once per claim: a claim's call pushes it once.
  std::shared_ptr<const ContextLink> context_link(std::shared_ptr<const ContextLink> parent);
  DedupeRuntime* runtime() const noexcept;
  DedupeSeries& series() const noexcept { return series_; }

 private:
  std::string ran_out_cause() const override;
  std::string gone_cause() const override;
  void count_lost() noexcept override;   // DedupeStats::claims_lost
  void report_lost() noexcept override;  // on_event: lease_lost
  std::string match_;
  DedupeSeries& series_;  // its key template's
  ContextLink link_;  // context_link()
};

// Renews its running calls' claims: one ClaimStore::renew() per period for
// all of them (the Renewer batches per runtime).
class DedupeRuntime final : public RenewGroup, public std::enable_shared_from_this<DedupeRuntime> {
 public:
  explicit DedupeRuntime(DedupeOptions options);
  const DedupeOptions& options() const noexcept { return options_; }
  // The store lives in this process (mem://).
  bool in_process() const noexcept { return in_process_; }
  ClaimStore& store() noexcept { return *store_; }
  // Counts in this runtime's DedupeStats and in the key template's series.
  void count(DedupeSeries& series, std::atomic<std::uint64_t> DedupeCounterStripe::*field) noexcept {
    counters_.add(field);
    series.counts.add(field);
  }
  DedupeStats stats() const;

  // The claim `sent` for `key`, renewed every third of the claim lease
  // until release(). One allocation.
  std::shared_ptr<HeldClaim> hold(std::string_view key, std::string owner, std::string_view match,
                                  std::chrono::steady_clock::time_point sent, DedupeSeries& series);
  void release(HeldClaim& claim) noexcept;

  // A claim request whose answer never came (a timeout, a connection lost
  // once it was sent) may still have been recorded by the store: the next
  // call of its key in this process claims as the same owner (owner_for), so
  // that it finds that record its own instead of a running duplicate, and
  // the method runs once. Kept for a claim lease; at most kMaxUnanswered.
  void unanswered_claim(std::string_view key, const std::string& owner);
  // The owner a new call of `key` claims as: an unanswered claim's (taken:
  // one call only), else a fresh unique_token().
  std::string owner_for(std::string_view key);
  static constexpr std::size_t kMaxUnanswered = 4096;
  // A store failure about `claim`'s outcome: counted in `errors`, reported
  // to on_event; never throws.
  void report(const HeldClaim& claim, const std::exception& error) noexcept;

 private:
  void renew(std::span<LeaseCore* const> claims, std::vector<bool>& owned) const override;
  std::string_view feature() const noexcept override { return "dedupe"; }
  const EventHook& event_hook() const noexcept override { return options_.on_event; }
  std::shared_ptr<const RenewGroup> owning_ref() const override { return shared_from_this(); }
  DedupeOptions options_;
  std::shared_ptr<ClaimStore> store_;
  bool in_process_ = false;
  struct Unanswered {
    std::string owner;
    std::chrono::steady_clock::time_point until;
  };
  Mutex unanswered_mutex_;
  KeyMap<Unanswered> unanswered_ WEAVE_GUARDED_BY(unanswered_mutex_);  // by key
  std::atomic<std::size_t> unanswered_count_{0};            // owner_for()'s check without the lock
  mutable DedupeCounters counters_;
};

// The process-wide runtime (configure_dedupe, else the defaults): a call
// takes it with `DedupeRuntimeRef rt;` (no lock, no shared count), anything
// else with dedupe_runtime() (a shared reference).
using DedupeRuntimeSlot = RuntimeSlot<DedupeRuntime, DedupeOptions>;
DedupeRuntimeSlot& dedupe_runtime_slot();
std::shared_ptr<DedupeRuntime> dedupe_runtime();

class DedupeRuntimeRef : public DedupeRuntimeSlot::Ref {
 public:
  DedupeRuntimeRef() : DedupeRuntimeSlot::Ref(dedupe_runtime_slot()) {}
};

// Binds a store URL scheme to a claim store (mem is built in; the Redis
// schemes register when Weave::dedupe_redis is linked).
using ClaimStoreFactory = std::function<std::shared_ptr<ClaimStore>(const DedupeOptions&)>;
void register_claim_store(std::string scheme, ClaimStoreFactory factory);

// Throws ConfigError when `url` names a scheme no linked library serves.
void check_dedupe_scheme(const std::string& url);

}  // namespace weave::detail
