// Internals shared by the files of src/lock: the client's shared state, what
// a lock lease adds to the core lease (core/lease_core.h), the call chain.
#pragma once

#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/call_context.h"
#include "core/lease_core.h"
#include "core/metrics.h"
#include "core/process.h"
#include "core/striped.h"
#include "mem_backend.h"
#include "weave/lease.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

namespace WEAVE_NAMESPACE::detail {

using Clock = std::chrono::steady_clock;

// One stripe of what a lock request and a lease count: a client's LockStats
// and a key template's LockSeries alike.
struct alignas(64) LockCounts {
  std::atomic<std::uint64_t> acquired{0}, reentered{0}, busy{0}, errors{0}, released{0}, lost{0},
      release_failures{0}, renewals{0};
  std::atomic<std::int64_t> acquiring_us{0};
};

// weave_lock_* of one key template (weave/metrics.h), for the whole process:
// a request and its lease count here as well as in their client's LockStats.
// Calls made on a LockClient directly count under "".
struct LockSeries {
  StripedCounters<LockCounts> counts;
  DurationHistogram wait;  // every request, however it ended (reentered: 0)
  DurationHistogram hold;  // acquisition to release (mem:// leases: coarse clock, ~4 ms); counts the releases
};
LockSeries& lock_series(std::string_view key_template);

// What every copy of a LockClient shares; the group its leases are renewed in.
struct ClientShared final : RenewGroup, std::enable_shared_from_this<ClientShared> {
  ClientShared() = default;
  ClientShared(const ClientShared&) = delete;
  // Made before fork(), dropped in the child: its backend's threads and
  // connections are the parent's; it is left alone, never torn down here.
  ~ClientShared() {
    if (pid != current_pid()) new std::shared_ptr<LockBackend>(std::move(backend));
  }
  // One renew_batch() item per key; a multi-key lease is owned only if all its keys are.
  void renew(std::span<LeaseCore* const> leases, std::vector<bool>& owned) const override;
  std::string_view feature() const noexcept override { return "lock"; }
  const EventHook& event_hook() const noexcept override { return options.on_event; }
  std::shared_ptr<const RenewGroup> owning_ref() const override { return shared_from_this(); }
  pid_t pid = current_pid();  // the process that made it
  LockOptions options;
  std::shared_ptr<LockBackend> backend;
  bool in_process = false;  // `backend` is a mem:// table: a call costs well under a clock reading
  // One acquisition or release sent to `backend`; a mem:// table's
  // acquisition fills `hint` with the key's slot, and a release given it
  // goes straight there.
  AcquireResult acquire(const AcquireRequest& r, MemSlotHint& hint) const {
    return in_process ? mem_acquire(*backend, r, hint) : backend->acquire(r);
  }
  ReleaseResult release(const ReleaseRequest& r, const MemSlotHint& hint) const {
    return in_process ? mem_release(*backend, r, hint) : backend->release(r);
  }
  // LockStats, counted by every copy of the client and by its leases, each
  // thread in a stripe of its own, summed by stats().
  using Counters = LockCounts;
  using Stats = StripedCounters<Counters>;
  mutable Stats stats;
  std::chrono::milliseconds renew_interval() const noexcept {
    auto r = options.renew_interval.count() > 0 ? options.renew_interval
                                                : options.watchdog_lease / 3;
    return r.count() > 0 ? r : std::chrono::milliseconds(1);
  }
};

// What a Lease is (weave/lease.h holds no data): the core lease (renewal,
// deadlines, loss) and what only a lock has. Made by LockClient with one
// std::allocate_shared from recycled blocks (core/recycled.h).
struct LeaseState final : LeaseCore, Lease {
  template <class Fill>  // writes the lease's Terms (LeaseCore's constructor)
  explicit LeaseState(Fill&& fill) : LeaseCore(fill), Lease(static_cast<LeaseCore&>(*this)) {}
  ~LeaseState() = default;
  // Both bases answer these; the core's are the same, minus the view's const.
  using LeaseCore::expires_at;
  using LeaseCore::renewed;
  using LeaseCore::stop_token;

  std::vector<std::pair<std::string, std::uint64_t>> more_;  // multi-key: the other keys, tokens
  LockType type_ = LockType::reentrant;
  std::uint64_t fence_ = 0;
  MemSlotHint slot_hint_;  // mem://: the first key's slot (its release goes there)
  // The client's backend, compared (never followed) by a reentrant request:
  // a lease that borrowed its client may outlive it once released.
  const LockBackend* backend_ = nullptr;
  bool on_expiry_ = false;  // Release::on_expiry
  std::chrono::milliseconds max_hold_{0};
  LockSeries* series_ = nullptr;  // the key template's (set with the lease)

  // The lease's first link in a call context (LeaseControl::chain_link): no
  // allocation per call. Its parent is the context the lease was first pushed
  // on (older links: no cycle). A further link is an allocation that keeps the lease.
  std::atomic<bool> link_taken_{false};
  ContextLink link_;

  const ClientShared& client() const noexcept { return static_cast<const ClientShared&>(*terms().group); }

 private:
  void count_lost() noexcept override;
  void report_lost() noexcept override;  // on_lost, then on_event
};

inline LeaseState& state(Lease& l) noexcept { return static_cast<LeaseState&>(l); }
inline const LeaseState& state(const Lease& l) noexcept { return static_cast<const LeaseState&>(l); }


// LockOptions::validate() without the URL's scheme: for a client given its
// backend (options.cpp).
void validate_values(const LockOptions& o);

// True when a request with `spec` passes its checks whatever its keys (an
// annotation's spec is checked once per method; an invalid one is checked,
// and refused, per call as before).
bool spec_is_valid(const LockSpec& spec) noexcept;

// LockBusy, or DuplicateCall (not retryable) for a release=on_expiry spec:
// such a lock guards against duplicate calls.
[[noreturn]] void throw_busy(const LockSpec& spec, const std::string& key, std::chrono::milliseconds waited);

struct LeaseControl {
  // Calls f with what a lost lease is reported as: HoldLimitExceeded when it
  // was held past max_hold, else LeaseLost.
  template <class F>
  static void as_lost_error(const LeaseState& l, F&& f);
  // Another hold for a reentrant acquisition; false when already released.
  // Throws LeaseLost when the lease was lost.
  static bool add_hold(LeaseState& l);
  // Gives up one hold; the last one releases in the backend.
  static void drop_hold(const std::shared_ptr<Lease>& l, bool may_throw);
  // drop_hold() in steps, for a driver that sends the releases itself:
  // begin_drop() gives up the hold and counts the backend releases to send
  // (every key of the lease when it was the last hold, else none):
  // request(i) for i < releases; each one's outcome goes to released() or,
  // from its catch block, failed(); end_drop() then reports and throws as
  // drop_hold() does.
  struct Drop {
    const LeaseState* lease = nullptr;
    bool last = false;
    bool childs_copy = false;  // the last hold of a fork()ed child's copy: nothing to do
    std::size_t releases = 0;
    Clock::time_point now{};
    bool lost = false;
    std::string failed_key, failure;  // the first failure
    ReleaseRequest request(std::size_t i) const noexcept;  // (views into the lease)
    void released(ReleaseResult r) noexcept;
    void failed(std::string_view key) noexcept;
  };
  static Drop begin_drop(LeaseState& l);
  static void end_drop(LeaseState& l, const Drop& d, bool may_throw);

  // LockClient::try_acquire_all, counted in `series` (the interceptor's key
  // template), for the call whose context is `context` (context_head()).
  // `spec_checked`: spec_is_valid(spec) said so (once per method).
  // `lend_client`: the caller keeps `c` alive until it gives up its hold (a
  // blocking call's LockRuntimeRef does; an asynchronous call's does not,
  // as it ends at the first suspension), so the lease borrows the client's
  // group (LeaseCore::Terms::group_lent).
  static LeaseHandle try_acquire(LockClient& c, std::span<const std::string_view> keys, const LockSpec& spec,
                                 bool spec_checked, std::chrono::milliseconds* waited, std::string* busy_key,
                                 LockSeries& series, const std::shared_ptr<const ContextLink>& context,
                                 bool lend_client) {
    return c.try_acquire_counted(keys, spec, spec_checked, waited, busy_key, series, context, lend_client);
  }

  // A copy of `c` for one thread's use (LockRuntime::for_thread): the same
  // client, with a reference count of its own, so the leases of threads
  // using the default client do not all count on one cache line.
  static LockClient thread_copy(const LockClient& c);

  // What every copy of `c` shares (its backend, options, counters).
  static const std::shared_ptr<const ClientShared>& shared_of(const LockClient& c) noexcept { return c.shared_; }
  // `lease` pushed on `parent`: the new head of a call context.
  // `fresh`: the caller is the lease's only holder (just acquired).
  static std::shared_ptr<const ContextLink> chain_link(const std::shared_ptr<Lease>& lease,
                                                       std::shared_ptr<const ContextLink> parent, bool fresh);
  // For a blocking call that holds `handle`'s lease while it runs: pushes
  // the lease on the thread's context (`here`: its context_head(), the call
  // staying on this thread) for the scope's lifetime. The lease's own first
  // link borrows the handle's reference instead of taking another (no
  // count changes hands: two atomic operations fewer per call) and gives it
  // back when the scope ends, also on throw, before the handle releases.
  // A further push of the same lease (reentrancy) keeps a reference of its own.
  class LentPush {
   public:
    LentPush(std::shared_ptr<const ContextLink>& here, LeaseHandle& handle)
        : here_(here), handle_(handle), push_(here, lend(here)) {}
    ~LentPush();
    LentPush(const LentPush&) = delete;
    LentPush& operator=(const LentPush&) = delete;

   private:
    // The link to push on `parent`: the lease's own, borrowing the handle's
    // reference (lent_ set), or, when a push holds that already, one of its own.
    std::shared_ptr<const ContextLink> lend(const std::shared_ptr<const ContextLink>& parent);
    std::shared_ptr<const ContextLink>& here_;
    LeaseHandle& handle_;
    Lease* lent_ = nullptr;  // the lease whose reference the link borrowed (null: none)
    ContextPush push_;
  };
  // The lease behind a lock link, sharing the link's ownership.
  static std::shared_ptr<Lease> lease_of(const std::shared_ptr<const ContextLink>& link) {
    return std::shared_ptr<Lease>(link, static_cast<Lease*>(link->held));
  }

 private:
  // The lease's own link (no allocation), now pushed on `parent` (moved
  // from), unless a push holds it already: then null, `parent` untouched.
  // `fresh`: the caller is the lease's only holder, so no push can race for it.
  static const ContextLink* own_link(LeaseState& l, std::shared_ptr<const ContextLink>& parent, bool fresh);
  // A link of its own (allocated) for a further push of `lease`, keeping it.
  static std::shared_ptr<const ContextLink> extra_link(const std::shared_ptr<Lease>& lease,
                                                       std::shared_ptr<const ContextLink> parent);
  // A failed backend release: counted, sent to on_event, thrown per
  // release_failure_policy when `may_throw`.
  static void release_failed(const LeaseState& l, const std::string& key, const std::string& cause,
                             bool may_throw);
};

}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Makes LeaseHandles (their constructor is private).
struct LeaseHandleAccess {
  static LeaseHandle make(std::shared_ptr<Lease> lease, bool reentrant) noexcept {
    return LeaseHandle(std::move(lease), reentrant);
  }
  // The handle's lease, the handle left empty (it releases nothing then).
  static std::shared_ptr<Lease> take(LeaseHandle& h) noexcept { return std::move(h.lease_); }
  // Gives an empty handle its lease back (LeaseControl::LentPush).
  static void put_back(LeaseHandle& h, std::shared_ptr<Lease> lease) noexcept { h.lease_ = std::move(lease); }
};
}  // namespace weave
