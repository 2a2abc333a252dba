// weave/lock_backend.h — the seam between lock semantics and lock storage.
//
// For backend implementers. LockClient implements every lock rule (waiting,
// watchdog, reentrancy, policies) on top of these few calls, so each backend
// (mem://, redis://, ...) gets identical semantics. A backend only stores
// leases: key -> (owner token, expiry, fencing token), and wakes waiters.
//
//   class MyBackend : public weave::LockBackend { ... };
//   weave::register_lock_backend("my", [](const weave::LockOptions& o) {
//     return std::make_shared<MyBackend>(weave::parse_store_url(o.url));
//   });
//   weave::configure_locks({.url = "my://host:1234"});
//
// All calls are thread-safe and may throw weave::IoError (BackendUnavailable,
// TimeoutError) when the backend cannot be reached, or weave::ReplyError when
// it refuses a command. Times are durations, never
// wall-clock instants, so clocks of different machines never meet.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weave/lock.h"
#include "weave/url.h"

namespace WEAVE_NAMESPACE {

struct WEAVE_API AcquireResult {
  bool acquired = false;
  // When acquired: the new lease's fencing token, strictly greater than every
  // token earlier handed out for this key.
  std::uint64_t fencing_token = 0;
  // When not acquired: how long the current holder's lease still runs (the
  // earliest moment it may become free without a release); 0 if unknown.
  std::chrono::milliseconds holder_ttl_left{0};
  // When acquired: how long the lease is known to hold, counted from the
  // moment acquire() was called; 0 = the whole lease. A backend that pays
  // for time spent acquiring or for clock drift (redlock://) reports less.
  std::chrono::milliseconds validity{0};
};

enum class ReleaseResult {
  released,  // the key was held by this owner and is now free
  lost,      // not held by this owner any more (expired, or taken by another)
};

struct WEAVE_API RenewItem {
  std::string_view key;
  std::string_view owner_token;
  std::chrono::milliseconds lease;  // new lease length from now
  LockType type = LockType::reentrant;  // read leases live apart from exclusive ones
};

enum class RenewResult { owned, lost };

// Waits for a release of one key. Created by LockBackend::prepare_wait()
// BEFORE the acquire() it follows, so a release between the two is not
// missed.
class WEAVE_API LockWaiter {
 public:
  virtual ~LockWaiter() = default;
  // Returns true as soon as the key was released (or freed) at any time since
  // prepare_wait(), false when `deadline` passed first. May return true
  // spuriously (callers retry acquire anyway). Must not poll the backend.
  virtual bool wait_until(std::chrono::steady_clock::time_point deadline) = 0;
  // After wait_until() returned true: the owner token a reentrant release
  // designated (the first starving waiter in line, whose turn it is), or ""
  // when anyone may try (no line; or more than one release, or a lost
  // connection, since the last wait). Default "": every waiter tries again.
  virtual std::string_view designated() const { return {}; }
  // For waiting without a thread (asynchronous methods): runs `wake` once
  // when the key is released (or freed) after prepare_wait() or the last
  // wait_until() that returned true, at once on this thread if it already
  // was, else on whichever thread learns of it. `wake` must be quick and must
  // not call the backend; wait_until(now) then reads the release (and
  // designated()). A later call replaces an earlier one. False: this backend
  // cannot, and the caller waits on a thread of its own (the default).
  virtual bool wake_on_change(std::function<void()> wake) {
    (void)wake;
    return false;
  }
};

// One acquisition attempt of `key` for `owner_token`.
struct WEAVE_API AcquireRequest {
  std::string_view key;
  std::string_view owner_token;
  std::chrono::milliseconds lease{0};  // the lease length from now
  LockType type = LockType::reentrant;
  // fair and write, when the caller will wait: > 0 creates or refreshes the
  // caller's place in line, to expire this long from now unless refreshed
  // again; 0 tries without queueing.
  std::chrono::milliseconds queue_entry{0};
  // The caller's steady_clock reading for this attempt (default: none),
  // possibly a little behind the clock, never ahead. An in-process backend
  // may use it instead of reading the clock again; a networked one ignores it.
  std::chrono::steady_clock::time_point now{};
  // reentrant: > 0 keeps the key's line of starving waiters (see acquire());
  // 0 is plain barging (a backend without a line ignores both fields).
  std::chrono::milliseconds handoff_turn{0};
  // reentrant: the caller has waited past LockOptions::starvation_after; when
  // refused it joins the line, or keeps its place, until the holder's lease
  // ends plus handoff_turn.
  bool starving = false;
};

struct WEAVE_API ReleaseRequest {
  std::string_view key;
  std::string_view owner_token;
  LockType type = LockType::reentrant;
  std::chrono::steady_clock::time_point now{};  // as in AcquireRequest
  // reentrant: the first waiter in line has this long to take the key.
  std::chrono::milliseconds handoff_turn{0};
};

class WEAVE_API LockBackend {
 public:
  virtual ~LockBackend() = default;

  // Takes the key if the request's type allows it now (below), or, when
  // `owner_token` holds it already, refreshes the lease and returns the same
  // fencing token; otherwise reports when it may change (holder_ttl_left).
  //   reentrant: granted when free or its lease ran out, and (handoff_turn
  //          > 0) nobody starving waits before the caller: while the line of
  //          starving waiters is not empty only its first may take the key;
  //          a starving caller refused joins the line. A release gives the
  //          first waiter handoff_turn to come; its place ends then.
  //   fair:  granted when free and the caller is first in line (or the line
  //          is empty); waiters whose place ran out leave the line.
  //   read:  granted unless a writer holds the key or a writer waits.
  //   write: granted when no writer holds it and no reader's lease is live.
  // Each read acquisition is its own lease with its own fencing token;
  // tokens of all types strictly increase per key. LockClient sends only
  // types the backend supports().
  virtual AcquireResult acquire(const AcquireRequest& request) = 0;

  // Frees the key (a read lease: the reader's share) if `owner_token` holds
  // it and its lease has not run out, and wakes its waiters (for read: once
  // no reader is left). Never frees another owner's lease.
  virtual ReleaseResult release(const ReleaseRequest& request) = 0;

  // Extends each lease still held by its owner to `lease` from now; one result
  // per item, in order. Never recreates a lease that was released or expired.
  // One call for many leases so networked backends can pipeline.
  virtual std::vector<RenewResult> renew_batch(std::span<const RenewItem> items) = 0;

  // A waiter for the next release of `key` (see LockWaiter).
  virtual std::unique_ptr<LockWaiter> prepare_wait(std::string_view key) = 0;

  // True when acquire() and release() implement `type`. Default: only
  // reentrant; LockClient refuses the others with a UsageError naming the
  // type and the backend's URL scheme.
  virtual bool supports(LockType type) const;
  // Gives up the caller's place in line (fair, write, a starving reentrant
  // waiter: one that timed out or failed), waking the others if that may
  // let one of them in.
  // Default: nothing.
  virtual void leave_queue(const ReleaseRequest& request);

  // For operators (LockClient::locks(), force_unlock(); `weave locks`,
  // `weave unlock`). Default: a UsageError saying the backend cannot.
  // Every lock whose key matches the glob `pattern` (`*`, `?`, `[...]`):
  // held, waited for, or with a live fencing counter; sorted by key.
  virtual std::vector<LockState> list(std::string_view pattern);
  // Drops every lease on `key` (its holders find it lost at their next
  // renewal or release), raises the fencing counter above every token handed
  // out, and wakes the waiters; the line is kept.
  virtual ForcedRelease force_release(std::string_view key);
};


using LockBackendFactory = std::function<std::shared_ptr<LockBackend>(const LockOptions&)>;
// Binds a URL scheme (without "://") to a factory, replacing an earlier one.
// "mem" is built in.
WEAVE_API void register_lock_backend(std::string scheme, LockBackendFactory factory);
// The backend for options.url. mem:// URLs with the same name share one table
// within the process. Throws ConfigError for an unknown or unbuilt scheme.
WEAVE_API std::shared_ptr<LockBackend> make_lock_backend(const LockOptions& options);

}  // namespace weave
