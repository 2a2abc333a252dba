// weave/lock.h — distributed locks: options, lock specs, the client and its
// RAII lease handles.
//
// The `lock` annotation uses a process-wide LockClient; code can use one
// directly too. A lease belongs to the call that acquired it (an owner token
// unique in the deployment), never to a thread, so a handle may be moved to and released
// from any thread, executor or coroutine. After fork() a child's copies of
// the parent's leases free nothing; a client made before the fork refuses to
// lock in the child (default_lock_client() renews itself there).
//
//   weave::configure_locks({.url = "mem://"});            // optional; else from the environment
//   weave::LockClient locks = weave::default_lock_client();
//   {
//     weave::LeaseHandle h = locks.acquire("order:1", {.wait = 2s});  // throws weave::LockBusy
//     write_with_fence(h->fencing_token());
//     if (h->stop_token().stop_requested()) return;       // the lease was lost: stop writing
//     h.release();                                         // throws weave::LeaseLost if it was lost
//   }                                                      // (or: released here, never throws)
//
// Without `ttl` a lease is in watchdog mode: it lasts LockOptions::watchdog_lease
// and one background thread per process renews it every third of that while
// it is held (at most LockSpec::max_hold, if set). With `ttl` it is fixed:
// never renewed; if it runs out while held its stop_token fires and release()
// reports the loss.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weave/annotation.h"  // weave::forever
#include "weave/event.h"
#include "weave/lease.h"

namespace WEAVE_NAMESPACE {

class LockBackend;

// What kind of lock (the `type=` of [[lock]]). A key should be used with one
// family: reentrant/fair (exclusive), or read/write.
enum class LockType {
  reentrant,  // exclusive; reentrant within one call chain (the default)
  fair,       // exclusive, granted in arrival order (FIFO) to waiters
  read,       // shared with other readers; excludes writers
  write,      // exclusive against readers and writers; waiting writers go before new readers
};
// "reentrant", "fair", "read", "write".
WEAVE_API std::string_view to_string(LockType type) noexcept;

// What happens when a lease turns out to be lost (expired, or taken by another
// owner) before it was released.
enum class LeaseLostPolicy {
  throw_at_release,  // LeaseHandle::release() (and the `lock` interceptor) throw weave::LeaseLost
  callback,          // only LockOptions::on_lost is called; release() does not throw
};

// What release() does when the backend fails to give a lease back (I/O
// error, timeout, refusal) after the work under it is done. Either way the
// failure is counted (LockStats::release_failures) and sent to
// LockOptions::on_event, and the lease runs out by itself (nothing renews it
// any more). A woven method's result is never dropped for it by default.
enum class ReleaseFailurePolicy {
  report,       // release() returns normally (a woven method returns its result)
  throw_error,  // release() throws weave::ReleaseFailed: says the work completed, never retryable
};

struct WEAVE_API LockOptions {
  // Its section in the configuration file and its environment variables
  // prefix (WEAVE_LOCK_<FIELD>): weave/config.h.
  static constexpr std::string_view config_section = "lock";
  // Backend: "mem://" (in-process, the default; "mem://name" is a separate
  // table) or "redis://[user:password@]host:port[/db]".
  std::string url = "mem://";
  // Lease length in watchdog mode (no `ttl`), renewed every `renew_interval`.
  std::chrono::milliseconds watchdog_lease{30'000};
  // 0 = watchdog_lease / 3.
  std::chrono::milliseconds renew_interval{0};
  LeaseLostPolicy lost_policy = LeaseLostPolicy::throw_at_release;
  // Called once per lost lease, under either policy, right after the lease's
  // stop_token fired: in release() when release finds the loss, else (renewal
  // failed, fixed ttl ran out while held) on a notifier thread of its own,
  // one callback after another, so a slow callback delays no renewal. Must
  // not throw.
  std::function<void(const Lease& lease, std::string_view cause)> on_lost = {};
  ReleaseFailurePolicy release_failure_policy = ReleaseFailurePolicy::report;
  // Told of every lost lease (after on_lost, on the same thread), every
  // failed release (on the releasing thread), thrown or not, and every failed
  // renewal: see weave/event.h. Empty: the process's handler
  // (weave::set_event_handler, by default a line on stderr) is told instead.
  EventHook on_event = {};
  // Reserved for networked backends (redis).
  std::chrono::milliseconds connect_timeout{2'000};
  std::chrono::milliseconds command_timeout{1'000};
  int pool_size = 4;
  // redis: prepended to every lock key ("order:1" -> "{weave:lock:order:1}").
  std::string key_prefix = "weave:lock:";
  // redis: how long a lock's fencing counter outlives its last lease (every
  // other key of a lock goes with its last lease or place in line). Tokens
  // stay increasing across the counter's expiry (docs/redis.md, "Fencing tokens").
  std::chrono::milliseconds key_grace{10'000};
  // fair and write locks: how long a waiter's place in line lasts unless its
  // waiter refreshes it (every third of this while it waits). A crashed
  // waiter stalls the line for at most about this long.
  std::chrono::milliseconds queue_entry{5'000};
  // reentrant locks, waiting callers (docs/redis.md, "Contention"): callers
  // barge (whoever asks first while the key is free gets it) until one has
  // waited this long; it is then starving and joins the key's line, and
  // while anyone starves only the first in line may take the key (oldest
  // first). weave::forever turns this off (plain barging, no bound on waits).
  std::chrono::milliseconds starvation_after{10};
  // How long the first starving waiter has to take the key after a release
  // before it loses its place (a waiter that died or is stopped holds the
  // others up this long at most).
  std::chrono::milliseconds handoff_turn{50};

  // Throws weave::ConfigError naming the field and the value when any option
  // is out of range (a duration <= 0 or over weave::max_duration, pool_size
  // outside 1..1024, an empty key_prefix, an unknown URL scheme). Every entry
  // point calls it: LockClient, configure_locks and load_lock_options.
  void validate() const;
};

// How to take one lock.
struct WEAVE_API LockSpec {
  // 0 = watchdog mode (renewed while held); else a fixed lease, never renewed.
  std::chrono::milliseconds ttl{0};
  // 0 = try once; a duration = wait at most that long; weave::forever = until acquired.
  std::chrono::milliseconds wait{0};
  enum class Release {
    on_return,  // released when the handle is released / destroyed
    on_expiry,  // never released explicitly: runs out after `ttl` (needs ttl > 0)
  };
  Release release = Release::on_return;
  LockType type = LockType::reentrant;
  // Watchdog mode only (ttl 0; UsageError with a ttl, which is a limit
  // already): how long, from acquisition, the watchdog keeps renewing.
  // 0 = no limit. At max_hold the lease counts as lost (its stop_token fires,
  // the cause says max_hold), renewal stops and the lease runs out within
  // LockOptions::watchdog_lease (sooner if released); release() reports
  // weave::HoldLimitExceeded (a LeaseLost) per lost_policy. It bounds a method
  // that ignores its stop_token.
  std::chrono::milliseconds max_hold{0};
};

class LockClient;

// Move-only owner of one hold on a lease. Destroying a holding handle
// releases it and never throws; release() reports a lost lease per policy.
class WEAVE_API LeaseHandle {
 public:
  LeaseHandle() noexcept = default;
  LeaseHandle(LeaseHandle&& other) noexcept;
  LeaseHandle& operator=(LeaseHandle&& other) noexcept;  // releases what it held first
  LeaseHandle(const LeaseHandle&) = delete;
  LeaseHandle& operator=(const LeaseHandle&) = delete;
  // (An empty handle, the common one to destroy, costs no call.)
  ~LeaseHandle() {
    if (lease_) drop(false);
  }

  // True while the handle holds a lease (acquired, not yet released).
  explicit operator bool() const noexcept { return lease_ != nullptr; }
  bool holds() const noexcept { return lease_ != nullptr; }
  const Lease& lease() const;  // UsageError when empty
  const Lease* operator->() const { return &lease(); }
  // True when this handle reuses a lease its call chain already held.
  bool reentrant() const noexcept { return reentrant_; }

  // Gives up this hold; the outermost hold releases the lease in the backend.
  // With Release::on_expiry the lease is left to run out. Throws
  // weave::LeaseLost (HoldLimitExceeded past max_hold) when the lease was
  // lost and the policy is throw_at_release. A backend failure to give it
  // back is handled per LockOptions::release_failure_policy (by default
  // counted and reported, not thrown; the lease then runs out), except for a
  // lease already known lost, which reports only the loss.
  void release();

  // The shared lease object (for LeaseScope / CallContext plumbing).
  const std::shared_ptr<Lease>& shared() const noexcept { return lease_; }

 private:
  friend class LockClient;
  friend struct LeaseHandleAccess;
  LeaseHandle(std::shared_ptr<Lease> lease, bool reentrant) noexcept
      : lease_(std::move(lease)), reentrant_(reentrant) {}
  void drop(bool may_throw);
  std::shared_ptr<Lease> lease_;
  bool reentrant_ = false;
};

// What a LockClient (and its copies) did so far. Counters only grow; take
// differences between two reads. (weave::write_metrics() exports the same
// counts per key template for the whole process.)
struct WEAVE_API LockStats {
  std::uint64_t acquired = 0;  // new leases handed out
  std::uint64_t reentered = 0;  // requests served by a lease the call chain held
  std::uint64_t busy = 0;       // requests that gave up: still busy after `wait`
  std::uint64_t errors = 0;     // requests that failed with an error (backend, usage)
  std::uint64_t released = 0;   // leases given back (their last hold dropped)
  std::uint64_t lost = 0;       // leases lost while held (expired, taken, renewal failed, max_hold)
  std::uint64_t release_failures = 0;  // releases the backend failed (the lease ran out by itself)
  std::uint64_t renewals = 0;  // leases extended by the watchdog (one per lease per renewal)
  std::chrono::microseconds acquiring{0};  // total time spent in acquisition calls, waits included
};

// One lease on a lock, as the store holds it now.
struct WEAVE_API LockHolder {
  std::string owner;                        // its owner token
  std::uint64_t fencing_token = 0;
  std::chrono::milliseconds expires_in{0};  // lease left, by the store's clock
};

// One lock as the store holds it now (LockClient::locks(), `weave locks`).
struct WEAVE_API LockState {
  std::string key;                  // as acquired, without the key prefix
  bool read = false;                // holders are readers (else one exclusive holder)
  std::vector<LockHolder> holders;  // none: free (waiters or a fencing counter are left)
  std::vector<std::string> line;    // fair: owners waiting in order; read/write: writers waiting
  std::uint64_t fence = 0;          // the fencing counter: no token handed out is higher
};

// What LockBackend::force_release() freed.
struct WEAVE_API ForcedRelease {
  std::vector<LockHolder> freed;  // the leases dropped (none: the key was free)
  std::uint64_t fence = 0;        // the counter after: above every token handed out before
};

// A connection to one lock backend plus the options. Cheap to copy (copies
// share the backend). Thread-safe.
class WEAVE_API LockClient {
 public:
  // Builds the backend named by options.url. Throws ConfigError for an
  // unknown scheme or a backend that is not built.
  explicit LockClient(LockOptions options = {});
  // Uses `backend` as is (tests, custom backends); options.url is informational.
  LockClient(LockOptions options, std::shared_ptr<LockBackend> backend);

  // Acquires `key` (waiting per spec.wait) or throws weave::LockBusy naming
  // the key and the time waited (weave::DuplicateCall, not retryable, for a
  // release=on_expiry spec: the key guards against duplicates). If the
  // current call chain (see CallContext) already holds `key` on this
  // backend, reuses that lease (hold count + 1; the outer lease's
  // ttl/release/max_hold terms apply, `spec` is not re-applied; a lost outer
  // lease throws weave::LeaseLost). Reuse follows the type: an
  // exclusive hold (reentrant, fair, write) serves any exclusive or read
  // request; a read hold serves reads only (asking for write while holding
  // read on the same key is a UsageError: an upgrade could deadlock).
  // A type the backend does not implement is a UsageError naming it.
  LeaseHandle acquire(std::string_view key, const LockSpec& spec = {});
  // Same, but returns an empty handle when busy. `waited`, if given, receives
  // the time spent.
  LeaseHandle try_acquire(std::string_view key, const LockSpec& spec = {},
                          std::chrono::milliseconds* waited = nullptr);

  // Several keys as ONE lease: taken all or none, in sorted order (so calls
  // locking overlapping sets in any order never deadlock), under one owner
  // token, renewed by one watchdog entry in one batch; the lease has a fencing
  // token per key (Lease::fencing_token(key)) and is lost if any key is.
  // Duplicates count once; one `wait` budget for all keys. Keys the call
  // chain already holds are reused, not taken again. LockBusy names the key
  // that stayed busy.
  //   std::string_view keys[] = {"acct:alice", "acct:bob"};
  //   auto h = locks.acquire_all(keys, {.wait = 2s});
  LeaseHandle acquire_all(std::span<const std::string_view> keys, const LockSpec& spec = {});
  // Same, but returns an empty handle when busy; `busy_key`, if given,
  // receives the key that stayed busy.
  LeaseHandle try_acquire_all(std::span<const std::string_view> keys, const LockSpec& spec = {},
                              std::chrono::milliseconds* waited = nullptr, std::string* busy_key = nullptr);

  const LockOptions& options() const noexcept;
  LockBackend& backend() const noexcept;
  LockStats stats() const noexcept;

  // For operators (what `weave locks` and `weave unlock` call). Every lock
  // of this client's store whose key matches the glob `pattern`, sorted by
  // key: its holders (owner, fencing token, lease left), its line, its
  // fencing counter. One SCAN of every master and one script per lock.
  std::vector<LockState> locks(std::string_view pattern = "*") const;
  // The lock of exactly `key` (no glob), if it is held, waited for or has
  // a live fencing counter.
  std::optional<LockState> lock_state(std::string_view key) const;
  // Frees `key` whoever holds it: the holders find their lease lost (at
  // their next renewal, within a third of the lease, or release), the
  // fencing counter moves above every token handed out (a fenced store
  // refuses the old holders' late writes), waiters are woken.
  ForcedRelease force_unlock(std::string_view key) const;
  // True in a child fork()ed after this client was made. It refuses to lock
  // there (UsageError: its connections and threads are the parent's); make a
  // new LockClient in the child. default_lock_client() does so by itself.
  bool made_in_other_process() const noexcept;

 private:
  friend struct detail::LeaseControl;
  // try_acquire_all, counted in `series` too (the interceptor's key template);
  // `spec_checked`: the spec passed its checks once already (the interceptor's,
  // per method); `context`: the running call's (detail::context_head(), read
  // by the caller); `lend_client`: the caller keeps this client alive until
  // it gives up its hold, and the lease borrows it.
  LeaseHandle try_acquire_counted(std::span<const std::string_view> keys, const LockSpec& spec, bool spec_checked,
                                  std::chrono::milliseconds* waited, std::string* busy_key,
                                  detail::LockSeries& series,
                                  const std::shared_ptr<const detail::ContextLink>& context, bool lend_client);
  std::shared_ptr<const detail::ClientShared> shared_;
};

// Sets the process-wide client the `lock` interceptor uses (replacing any
// earlier one; leases already held keep their backend). Throws ConfigError.
WEAVE_API void configure_locks(LockOptions options);
// The process-wide client; created on first use from the environment
// (weave::load_lock_options(): WEAVE_LOCK_URL, WEAVE_CONFIG) when
// configure_locks() was not called.
WEAVE_API LockClient default_lock_client();

// Puts a lease on the current call chain for this scope, so that nested
// acquisitions of the same key reuse it and current_lease() finds it. The
// `lock` interceptor does this around the method; use it with LockClient
// when code below should see the lease.
//
//   auto h = locks.acquire("order:1");
//   weave::LeaseScope in_chain(h);
//   svc.pay("1", 100);          // a woven [[lock(key="order:<arg0>")]] reuses h
class WEAVE_API LeaseScope {
 public:
  explicit LeaseScope(const LeaseHandle& handle);
  ~LeaseScope();
  LeaseScope(const LeaseScope&) = delete;
  LeaseScope& operator=(const LeaseScope&) = delete;

 private:
  std::shared_ptr<const detail::ContextLink> previous_;
};

}  // namespace weave
