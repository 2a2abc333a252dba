// The process-wide state of [[dedupe]]: options, the claim store for the
// URL, counters, and the renewer that keeps running calls' claims alive.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "core/feature_runtime.h"
#include "core/process.h"
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

// A running call's claim (weave::DedupeClaim) while the renewer keeps it:
// lost once a renewal found it gone, or its deadline passed without one (a
// paused process). Made by DedupeRuntime::hold, always through
// std::shared_ptr; linked in the runtime's list until release().
class WEAVE_API HeldClaim final : public DedupeClaim, public std::enable_shared_from_this<HeldClaim> {
 public:
  using Clock = std::chrono::steady_clock;
  // `sent`: when the claim was sent (the store's lease started after it).
  HeldClaim(std::string_view key, std::string owner, std::string_view match, std::chrono::milliseconds lease,
            Clock::time_point sent);
  ~HeldClaim() = default;
  const std::string& match() const noexcept { return match_; }
  // The claim of the call this one runs inside, on the same thread.
  const HeldClaim* enclosing() const noexcept { return enclosing_; }
  // lost(), at `now`: marks the claim lost once its deadline passed.
  bool check(Clock::time_point now) const noexcept;
  // Marks it lost (once) and fires its stop token.
  void mark_lost(const char* cause) const noexcept;

 private:
  friend class weave::DedupeClaim;
  friend class DedupeRuntime;
  std::string key_, owner_, match_;
  std::chrono::milliseconds lease_;
  std::atomic<Clock::rep> expires_;
  // Why it was lost (a static text), or null while it is not: set once.
  mutable std::atomic<const char*> cause_{nullptr};
  // The call ended (release()): its deadline no longer makes it lost.
  std::atomic<bool> released_{false};
  std::stop_source stop_;  // fired by mark_lost
  // The runtime's list of held claims (its mutex guards them).
  HeldClaim* prev_ = nullptr;
  HeldClaim* next_ = nullptr;
  const HeldClaim* enclosing_ = nullptr;  // enclosing()
  friend class ClaimScope;
};

// Makes `claim` this thread's current_dedupe_claim() for the scope.
class WEAVE_API ClaimScope {
 public:
  explicit ClaimScope(HeldClaim& claim) noexcept;
  ~ClaimScope();
  ClaimScope(const ClaimScope&) = delete;
  ClaimScope& operator=(const ClaimScope&) = delete;
};

class WEAVE_API DedupeRuntime {
 public:
  explicit DedupeRuntime(DedupeOptions options);
  ~DedupeRuntime();
  const DedupeOptions& options() const noexcept { return options_; }
  ClaimStore& store() noexcept { return *store_; }
  DedupeCounters& counters() noexcept { return counters_; }
  DedupeStats stats() const;

  // Renewed every third of the claim lease until released; `sent` is when
  // its claim was sent. One allocation; the list is intrusive.
  std::shared_ptr<HeldClaim> hold(std::string_view key, std::string owner, std::string_view match,
                                  std::chrono::steady_clock::time_point sent);
  void release(HeldClaim& claim) noexcept;
  // Reports to on_event, counting a store failure in `errors`; never throws.
  void report(std::string_view key, const std::exception& error, bool store_failure = true) noexcept;

 private:
  void renew_loop();
  DedupeOptions options_;
  std::shared_ptr<ClaimStore> store_;
  DedupeCounters counters_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  HeldClaim* held_ = nullptr;  // the head of the list
  OwnedThread renewer_;
};

// The process-wide runtime (configure_dedupe, else the defaults): a call
// takes it with `DedupeRuntimeRef rt;` (no lock, no shared count), anything
// else with dedupe_runtime() (a shared reference).
using DedupeRuntimeSlot = RuntimeSlot<DedupeRuntime, DedupeOptions>;
WEAVE_API DedupeRuntimeSlot& dedupe_runtime_slot();
WEAVE_API std::shared_ptr<DedupeRuntime> dedupe_runtime();

class DedupeRuntimeRef : public DedupeRuntimeSlot::Ref {
 public:
  DedupeRuntimeRef() : DedupeRuntimeSlot::Ref(dedupe_runtime_slot()) {}
};

// Binds a store URL scheme to a claim store (mem is built in; the Redis
// schemes register when Weave::dedupe_redis is linked).
using ClaimStoreFactory = std::function<std::shared_ptr<ClaimStore>(const DedupeOptions&)>;
WEAVE_API void register_claim_store(std::string scheme, ClaimStoreFactory factory);

// Throws ConfigError when `url` names a scheme no linked library serves.
WEAVE_API void check_dedupe_scheme(const std::string& url);

}  // namespace weave::detail
