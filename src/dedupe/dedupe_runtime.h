// The process-wide state of [[dedupe]]: options, the claim store for the
// URL, counters, and the renewer that keeps running calls' claims alive.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "dedupe/claim_store.h"
#include "weave/dedupe.h"

namespace WEAVE_NAMESPACE::detail {

struct WEAVE_API DedupeCounters {
  std::atomic<std::uint64_t> first_calls{0}, duplicates{0}, replays{0}, waited{0}, in_flight_refused{0},
      mismatches{0}, forgotten{0}, remembered{0}, claims_lost{0}, errors{0};
};

// A running call's claim while the renewer keeps it: lost() once a renewal
// found it gone, or its deadline passed without one (a paused process).
class WEAVE_API HeldClaim {
 public:
  HeldClaim(std::string key, std::string owner, std::string match, std::chrono::milliseconds lease);
  const std::string& key() const noexcept { return key_; }
  const std::string& owner() const noexcept { return owner_; }
  bool lost() const noexcept;

 private:
  friend class DedupeRuntime;
  std::string key_, owner_, match_;
  std::chrono::milliseconds lease_;
  std::atomic<std::chrono::steady_clock::rep> expires_;
  std::atomic<bool> lost_{false};
};

class WEAVE_API DedupeRuntime {
 public:
  explicit DedupeRuntime(DedupeOptions options);
  ~DedupeRuntime();
  const DedupeOptions& options() const noexcept { return options_; }
  ClaimStore& store() noexcept { return *store_; }
  DedupeCounters& counters() noexcept { return counters_; }
  DedupeStats stats() const;

  // Renewed every third of the claim lease until released.
  std::shared_ptr<HeldClaim> hold(std::string key, std::string owner, std::string match);
  void release(const std::shared_ptr<HeldClaim>& claim);
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
  std::map<const HeldClaim*, std::shared_ptr<HeldClaim>> held_;
  std::thread renewer_;
};

WEAVE_API std::shared_ptr<DedupeRuntime> dedupe_runtime();

// Binds a store URL scheme to a claim store (mem is built in; the Redis
// schemes register when Weave::dedupe_redis is linked).
using ClaimStoreFactory = std::function<std::shared_ptr<ClaimStore>(const DedupeOptions&)>;
WEAVE_API void register_claim_store(std::string scheme, ClaimStoreFactory factory);

// A token unique across processes and hosts: 128 random bits per process
// (drawn again after fork) and a counter.
WEAVE_API std::string unique_token();

// Throws ConfigError when `url` names a scheme no linked library serves.
WEAVE_API void check_dedupe_scheme(const std::string& url);

}  // namespace weave::detail
