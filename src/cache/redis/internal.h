// Internals shared by the files of src/cache/redis (the shared tier of
// [[cache]] on the Redis URLs), one job per file:
//
//   keys.cpp          where an entry, its leases and the channel live, and what an entry holds
//   invalidation.cpp  the invalidation channel's messages: writing and reading them
//   fill_waiters.cpp  this process's callers waiting for another's fill lease, and their wakes
//   redis_remote.cpp  RemoteTier over the store layer: the scripts, and the parts above wired up
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/remote_tier.h"
#include "core/key_hash.h"
#include "core/process.h"
#include "core/wake_list.h"
#include "store/executor.h"
#include "store/feed_keeper.h"

namespace WEAVE_NAMESPACE::cache_redis {

// ---- keys.cpp: the layout in Redis (docs/cache.md, "Keys in Redis") ----

// "{<prefix><name>:<key>}": a value, or a tombstone after an eviction.
std::string entry_key(std::string_view prefix, std::string_view name, std::string_view key);
// Its siblings in the same slot: the fill lease (sync=true) and the refresh claim (refresh_after).
std::string fill_lease_key(const std::string& entry);
std::string refresh_claim_key(const std::string& entry);
// "{<prefix><name>:", what every entry key of `name` starts with (`more`:
// room reserved for what the caller appends).
std::string entry_head(std::string_view prefix, std::string_view name, std::size_t more = 0);
// The key an entry key (as SCAN returns it) holds, given its name's entry_head().
std::string_view key_of_entry(std::string_view entry, std::string_view head);
// "{<prefix>}invalidations"
std::string invalidation_channel(std::string_view prefix);
// A SCAN MATCH pattern for every entry of `name` (not their leases).
std::string entries_pattern(std::string_view prefix, std::string_view name);
// An entry's text, "<version>[@<written ms>]:<json>" (scripts/_entry.lua);
// text not written by Weave reads as a miss.
detail::RemoteRead read_entry(std::string_view text);

// ---- invalidation.cpp: the channel's messages ----

// Drops `key` of `name` (kind 'k', or 'f': only wakes fill waiters), or all
// of `name` when key is null.
std::string invalidation(std::string_view sender, std::string_view name, const std::string_view* key,
                         char kind = 'k');
struct ParsedInvalidation {
  std::string_view sender, name;
  std::vector<std::string_view> keys;  // empty with `all`
  bool all = false;
  bool wake_only = false;  // 'f'
};
// Nothing when the message is not one Weave wrote.
std::optional<ParsedInvalidation> parse_invalidation(std::string_view message);

// ---- fill_waiters.cpp ----

// The fill waiters of this process, per entry key: woken by any message
// about their key (or their name, or a gap of the feed), then they read again.
class FillWaiters {
 public:
  // One waiter, made before its claim: a wake published after the claim's
  // script ran is not lost.
  class Waiting final : public detail::FillWaiter {
   public:
    Waiting(FillWaiters& w, std::string entry);
    ~Waiting() override;
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
    bool wait_until(std::chrono::steady_clock::time_point until) override;
    bool wake_on_change(std::function<void()> wake) override;

   private:
    bool woken_locked() WEAVE_REQUIRES(w_.mutex_);
    FillWaiters& w_;
    std::string entry_;
    std::uint64_t wakes_ = 0, all_ = 0;
  };

  // Wakes the waiters of `entry` (an entry key).
  void woken(const std::string& entry);
  // Wakes every waiter.
  void woken_all();

 private:
  struct Slot {
    int waiters = 0;
    std::uint64_t wakes = 0;
    detail::WakeList wakes_without_thread;
  };
  detail::Mutex mutex_;
  std::condition_variable cv_;
  detail::KeyMap<Slot> waits_ WEAVE_GUARDED_BY(mutex_);
  std::uint64_t wake_all_ WEAVE_GUARDED_BY(mutex_) = 0;
  std::atomic<int> waiting_{0};
};

}  // namespace weave::cache_redis
