// The shared tier of [[cache]]: where values live for every process, and the
// feed of invalidations that keeps local tiers honest. mem:// keeps it in this
// process (remote_mem.cpp); Redis URLs run it through the store layer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE::detail {

// A read of one key: its value, if any, and the key's write version at the
// time of the read (bumped by every put and evict).
struct RemoteRead {
  std::optional<std::string> json;
  std::uint64_t version = 0;
  // When the value was stored (fill or put), wall clock ms since the epoch;
  // 0 when not known (an entry written by an older Weave).
  std::int64_t written_ms = 0;
  // The store holds no entry for the key at all (not even one that does not
  // parse, which reads as version 0 too).
  bool absent = false;
};

// The wall clock in ms since the epoch: entries carry it (written_ms), and
// every process of a deployment compares against its own (refresh_after).
inline std::int64_t wall_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What try_claim_fill() found (sync=true).
enum class FillClaim {
  load,        // the caller holds the fill lease: it loads, then fill() or release()
  read_again,  // the key was filled or written since the miss
  held,        // another caller holds the lease, until `held_until` at the latest
};
struct FillClaimed {
  FillClaim claim = FillClaim::load;
  std::chrono::steady_clock::time_point held_until{};
};

// sync=true: this process's wait for a fill lease another caller holds,
// made before the claim (a wake sent after the claim's step is not lost).
class FillWaiter {
 public:
  virtual ~FillWaiter() = default;
  // True once woken (the key filled, written or evicted, or its lease given
  // back; may be spurious) since the waiter was made; false at `until`.
  virtual bool wait_until(std::chrono::steady_clock::time_point until) = 0;
  // For waiting without a thread (asynchronous methods): runs `wake` once,
  // at the first wake (at once if one came), on whichever thread learns of
  // it; quick, never calling the store. A later call replaces an earlier one.
  // Always true (the shape of LockWaiter's and ClaimWaiter's).
  virtual bool wake_on_change(std::function<void()> wake) = 0;
};

class RemoteTier {
 public:
  virtual ~RemoteTier() = default;
  // Every call may throw weave::IoError / ReplyError; the cache fails open.

  virtual RemoteRead get(std::string_view name, std::string_view key) = 0;
  // After a read that found the key absent (RemoteRead::absent), before loading it:
  // gives the key a version for the load to fill over (a tombstone kept for
  // `guard`), or nullopt when it was stored meanwhile (read again). A store
  // that loses its data (a restart without persistence, a failover to a
  // replica that had not received the write) holds the key at version 0
  // again, so a fill over version 0 could not tell that a write it could
  // not see came in between; a fill over this version is refused. Redis
  // draws one no other load and no count of writes reaches; mem:// loses
  // its data only with its process and answers 0.
  virtual std::optional<std::uint64_t> version_for_load(std::string_view name, std::string_view key,
                                                        std::chrono::milliseconds guard) = 0;
  // Stores a value loaded after a miss, only if no put or evict of the key
  // came after the read that missed (`read_version`): a slow load never
  // installs a value older than a write. Sends no invalidation (nobody else
  // can hold an entry for a key that was missing). False when refused.
  // `token` ("" for none): the leases it holds (claim_fill, claim_refresh)
  // are dropped in the same step, and their waiters woken.
  virtual bool fill(std::string_view name, std::string_view key, std::string_view json,
                    std::chrono::milliseconds ttl, std::uint64_t read_version, std::string_view token) = 0;
  // A write: stores and tells every other process to drop `key`. Returns
  // once that message was published; true when this call sent it (false: it
  // went in a message another writer sent, or the store sends none).
  virtual bool put(std::string_view name, std::string_view key, std::string_view json,
                   std::chrono::milliseconds ttl) = 0;
  // Drops `key` (or every key of `name` when key is null) everywhere; returns
  // as put() does.
  virtual bool evict(std::string_view name, const std::string_view* key) = 0;
  // The keys of `name` the tier holds now (values and evictions' tombstones);
  // for operators (`weave cache stats`): one walk of the whole store.
  virtual std::uint64_t stored_keys(std::string_view name) = 0;

  // sync=true: a waiter for `key`'s fill lease, made before try_claim_fill.
  virtual std::unique_ptr<FillWaiter> watch_fill(std::string_view name, std::string_view key) = 0;
  // sync=true, after a miss that read `read_version`: claims the key's fill
  // lease for `lease` (one loader per deployment), or says who has it. Never
  // waits: the caller waits on its watch_fill() waiter, then reads again.
  virtual FillClaimed try_claim_fill(std::string_view name, std::string_view key, std::string_view token,
                                     std::chrono::milliseconds lease, std::uint64_t read_version) = 0;
  // refresh_after: claims the reload of the value `read` saw for `lease`;
  // false when another caller holds the claim or the entry changed since.
  virtual bool claim_refresh(std::string_view name, std::string_view key, const RemoteRead& read,
                             std::string_view token, std::chrono::milliseconds lease) = 0;
  // Drops the leases `token` holds without filling, waking their waiters.
  virtual void release(std::string_view name, std::string_view key, std::string_view token) = 0;
  // Extends by `lease` the fill lease and refresh claim each item's token
  // still holds (a load that outlasts fill_lease keeps its lease); one answer
  // per item, false when it holds neither any more.
  struct LeaseRenewal {
    std::string_view name, key, token;
    std::chrono::milliseconds lease;
  };
  virtual std::vector<bool> renew(std::span<const LeaseRenewal> items) = 0;

  // Invalidations from other processes: (name, key) or (name, null) for
  // all of a name; on_gap when the feed went down (`down`) or is coming back
  // after missing some: every local tier is dropped (which also refuses
  // every fill stamped before), and bypassed while not live().
  struct Listener {
    std::function<void(std::string_view name, const std::string_view* key)> on_invalidate;
    std::function<void(bool down)> on_gap;
  };
  virtual void listen(Listener listener) = 0;
  // True while the invalidation feed is known to be complete up to about
  // `now` (subscribed, and its reader has drained the socket recently: a
  // process resuming from a pause is not live until its reader caught up).
  // A local tier may serve only then.
  virtual bool live(std::chrono::steady_clock::time_point now) const noexcept = 0;
  // True when the tier lives in this process (mem://): its calls cost less
  // than a thread hop, so an asynchronous call makes them inline.
  virtual bool in_process() const noexcept { return false; }
};

// mem://[name]: a table in this process shared by every cache of the same
// URL; always live (there is no other process to hear from).
std::shared_ptr<RemoteTier> make_mem_remote(std::string_view table);

}  // namespace weave::detail
