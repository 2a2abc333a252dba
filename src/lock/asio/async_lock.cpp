// The `lock` interceptor of asynchronous methods: the blocking interceptor's
// rules (src/lock/acquisition.h) driven by suspension. A waiter holds no
// thread: it is resumed by the release notification (LockWaiter::
// wake_on_change), its deadline, or its cancellation; of this process's
// coroutines waiting for one key only a local leader talks to the store.
// Other store round trips run on the store pool (mem:// calls run inline: they
// cost less than a thread hop; a Redis backend over one executor, a
// DirectLockBackend, has its acquire and release sent from the coroutine's own
// thread: store/asio/async_run.h). While the body runs, the lease is in the
// call's context, and a lost lease or the caller's cancellation cancels the
// body's pending operation.
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "async/async_call.h"
#include "async/blocking_pool.h"
#include "async/wakeup.h"
#include "lock/acquisition.h"
#include "lock/direct_backend.h"
#include "lock/lock_interceptor.h"
#include "lock/lock_runtime.h"
#include "store/asio/async_run.h"
#include "weave/asio.h"
#include "weave/async_interceptor.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

using std::chrono::milliseconds;

[[noreturn]] void throw_aborted() {
  throw net::system_error(net::error::operation_aborted);
}

// Throws operation_aborted when the awaiting coroutine was cancelled while
// it could not be told (during a store call, say).
net::awaitable<void> throw_if_cancelled() {
  const net::cancellation_state state = co_await net::this_coro::cancellation_state;
  if (state.cancelled() != net::cancellation_type::none) throw_aborted();
}

// The blocking path's LocalGate, by suspension: of this process's
// coroutines waiting for one exclusive key of one backend, one leads.
class AsyncGate {
 public:
  AsyncGate(const LockBackend* backend, std::string_view key) : gate_(backend, key) {}
  ~AsyncGate() { resign(); }
  AsyncGate(const AsyncGate&) = delete;
  AsyncGate& operator=(const AsyncGate&) = delete;

  // Becomes the leader, or returns false at `deadline`; cancelled, throws
  // operation_aborted and leaves no place behind (nor when its coroutine is
  // destroyed without resuming: the gate's destructor then passes the turn on).
  net::awaitable<bool> lead(Clock::time_point deadline) {
    if (leading_) co_return true;
    Follower me;
    {
      Guard g(gate_->mutex);
      if (!gate_->leader) {
        gate_->leader = leading_ = true;
        co_return true;
      }
      gate_->followers.push_back(&me);
    }
    // However the wait ends (woken, the deadline, cancelled, or the coroutine
    // destroyed without resuming): out of the line, and a turn handed to it
    // meanwhile is taken (or, on the way out, passed on).
    struct Queued {
      AsyncGate& gate;
      Follower& me;
      ~Queued() { gate.leave_line(me); }
    };
    std::exception_ptr error;
    {
      const Queued queued{*this, me};
      try {
        co_await me.wakeup->wait_until(deadline);
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) {
      resign();
      std::rethrow_exception(error);
    }
    co_return leading_;
  }

  void resign() {
    if (!leading_) return;
    leading_ = false;
    std::shared_ptr<Wakeup> next;
    {
      Guard g(gate_->mutex);
      if (gate_->followers.empty()) {
        gate_->leader = false;
        return;
      }
      Follower* f = gate_->followers.front();
      gate_->followers.pop_front();
      f->granted = true;
      next = f->wakeup;
    }
    next->notify();
  }

 private:
  struct Follower {
    std::shared_ptr<Wakeup> wakeup = std::make_shared<Wakeup>();
    bool granted = false;  // under the gate's mutex
  };
  // A follower leaves the line: the leader if it was granted the turn
  // (perhaps as its deadline passed: its next try gives up and hands it on).
  void leave_line(Follower& me) noexcept {
    Guard g(gate_->mutex);
    if (me.granted)
      leading_ = true;
    else
      std::erase(gate_->followers, &me);
  }
  struct Gate {
    Mutex mutex;
    bool leader WEAVE_GUARDED_BY(mutex) = false;
    std::deque<Follower*> followers WEAVE_GUARDED_BY(mutex);
  };
  GateRef<Gate> gate_;
  bool leading_ = false;
};

// How an asynchronous call reaches its client's backend.
struct BackendPath {
  bool in_process = false;              // mem://: inline
  DirectLockBackend* direct = nullptr;  // else without a thread hop when it can, else the store pool

  BackendPath() = default;
  explicit BackendPath(const ClientShared& shared)
      : in_process(shared.in_process),
        direct(shared.in_process ? nullptr : dynamic_cast<DirectLockBackend*>(shared.backend.get())) {}
};

// One key, until acquired or its deadline (take_key of the blocking path).
net::awaitable<std::optional<AcquireResult>> take_key_async(KeyAttempt& k, const BackendPath& path) {
  std::optional<AsyncGate> gate;
  if (k.gated()) gate.emplace(&k.backend(), k.key());
  bool first = true;
  for (;;) {
    if (gate && !co_await gate->lead(k.deadline())) co_return std::nullopt;
    KeyAttempt::Tried t;
    if (path.in_process) {
      t = k.try_once();  // (inline, without a coroutine frame: the uncontended call's cost)
    } else if (path.direct && first) {
      // The first try goes without preparing a wait (a subscription: the
      // store pool's), which only a refusal needs.
      const AcquireRequest request = k.request(/*prepare_wait=*/false);
      const std::unique_ptr<store::DirectRequest<AcquireResult>> direct = path.direct->direct_acquire(request);
      std::optional<AcquireResult> r = co_await store::try_run_async(*direct);
      if (!r) r = co_await run_on(store_pool(), [&] { return k.backend().acquire(request); });
      t = k.tried(*r);
    } else {
      t = co_await run_on(store_pool(), [&k] { return k.try_once(); });
    }
    first = false;
    if (t.acquired) co_return t.acquired;  // the gate hands leadership on as it goes
    if (t.give_up) co_return std::nullopt;
    co_await throw_if_cancelled();
    if (t.again) continue;
    Clock::time_point wake = t.wake;
    while (co_await wait_for_change(*k.waiter(), wake)) {
      const std::optional<Clock::time_point> more = k.after_release(t.wake);
      if (!more) break;
      wake = *more;
    }
  }
}

// LeaseHandle::release() (`may_throw`: per the options' policies) or the
// handle's quiet release, suspending: the backend's releases are sent as
// the lease's backend allows. Not cut short by a cancellation (the call
// ended, or gives the lease back because it was cancelled).
net::awaitable<void> release_async(LeaseHandle& handle, const BackendPath& path, bool may_throw) {
  if (path.in_process || !path.direct) {
    co_await store_call(path.in_process, [&handle, may_throw] {
      if (may_throw)
        handle.release();
      else
        LeaseHandle gone = std::move(handle);
    });
    co_return;
  }
  const std::shared_ptr<Lease> lease = LeaseHandleAccess::take(handle);
  if (!lease) co_return;
  LeaseState& l = state(*lease);
  LeaseControl::Drop d = LeaseControl::begin_drop(l);
  const bool throw_if_cancelled = co_await net::this_coro::throw_if_cancelled();
  co_await net::this_coro::throw_if_cancelled(false);
  for (std::size_t i = 0; i < d.releases; ++i) {
    const ReleaseRequest r = d.request(i);
    try {
      const std::unique_ptr<store::DirectRequest<ReleaseResult>> direct = path.direct->direct_release(r);
      std::optional<ReleaseResult> done = co_await store::try_run_async(*direct);
      if (!done) done = co_await run_on(store_pool(), [&l, &r] { return l.client().backend->release(r); });
      d.released(*done);
    } catch (...) {
      d.failed(r.key);
    }
  }
  co_await net::this_coro::throw_if_cancelled(throw_if_cancelled);
  if (may_throw) {
    LeaseControl::end_drop(l, d, true);
  } else {
    try {
      LeaseControl::end_drop(l, d, false);
    } catch (...) {
    }
  }
}

// LockClient::try_acquire_counted, suspending. Cancelled, it leaves no
// waiter, no place in line and no key behind, and throws operation_aborted.
net::awaitable<LeaseHandle> acquire_async(const LockClient& client, const BackendPath& path,
                                          std::span<const std::string_view> keys, const LockSpec& spec,
                                          milliseconds* waited, std::string* busy_key, LockSeries& series) {
  const std::shared_ptr<const ClientShared>& shared = LeaseControl::shared_of(client);
  const bool in_process = path.in_process;
  Acquisition a(shared, keys, spec, /*spec_checked=*/false, waited, busy_key, series, /*lend_client=*/false);
  if (LeaseHandle h = a.begin(context_head())) co_return h;
  for (std::size_t i = 0; i < a.missing().size(); ++i) {
    KeyAttempt k = a.attempt(i);
    std::optional<AcquireResult> r;
    std::exception_ptr error;
    try {
      r = co_await take_key_async(k, path);
    } catch (...) {
      error = std::current_exception();
    }
    // No place in line and no key taken before this one: nothing for the
    // store, no thread hop.
    const bool nothing_to_undo = in_process || (i == 0 && !k.holds_place());
    if (error) {
      co_await store_call(nothing_to_undo, [&] {
        k.leave_line();
        try {
          std::rethrow_exception(error);
        } catch (...) {
          a.failed(i);  // names the key, gives the ones before back
        }
      });
      std::rethrow_exception(error);
    }
    if (!r) {
      co_return co_await store_call(nothing_to_undo, [&] {
        k.leave_line();
        return a.busy(i);
      });
    }
    a.took(i, *r, k);
    if (i + 1 == a.missing().size()) {
      const std::span<const RenewItem> stale = a.stale();
      if (stale.empty()) break;
      bool kept = false, again = false;
      co_await store_call(in_process, [&] {
        try {
          kept = a.refreshed(shared->backend->renew_batch(stale));
        } catch (...) {
          error = std::current_exception();
        }
        if (!kept) again = a.start_over();
      });
      if (error) std::rethrow_exception(error);
      if (kept) break;
      if (!again) co_return a.lost_busy();
      i = static_cast<std::size_t>(-1);  // from the first key again
    }
  }
  LeaseHandle lease = a.finish();
  // Cancelled while the last store call ran: the key it set goes back now.
  const net::cancellation_state state = co_await net::this_coro::cancellation_state;
  if (state.cancelled() != net::cancellation_type::none) {
    co_await release_async(lease, path, /*may_throw=*/false);
    throw_aborted();
  }
  co_return lease;
}

bool is_aborted(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const net::system_error& s) {
    return s.code() == net::error::operation_aborted;
  } catch (...) {
    return false;
  }
}

class AsyncLockInterceptor final : public AsyncBuiltin {
 public:
  using AsyncBuiltin::AsyncBuiltin;

  net::awaitable<void> around_async(AsyncInvocation& inv) override {
    const ParsedLock& p = *inv.prepared<ParsedLock>();
    const LockSettings& settings = p.settings;
    std::string_view one;
    std::vector<std::string_view> many;
    const std::span<const std::string_view> keys = p.keys(inv.annotation(), one, many);
    milliseconds waited{0};
    std::string busy_key;
    LeaseHandle lease;
    std::optional<LockClient> client;  // a copy when the call may suspend: the coroutine may move threads
    BackendPath path;
    {
      const LockRuntimeRef rt;  // this thread's client, up to the first suspension
      path = BackendPath(*LeaseControl::shared_of(rt->client));
      if (path.in_process && settings.spec.wait == milliseconds(0)) {
        // Nothing to wait for and no store round trip: the blocking path's
        // own request, inline (no coroutine frames, no suspension). Nothing
        // can cancel it midway: the call's cancellations wait for its
        // running handler (CallCell), so one sent meanwhile reaches the
        // body's first co_await, which then gives the key back.
        // (Not lent: `rt` ends here, the lease is held across suspensions.)
        lease = LeaseControl::try_acquire(rt->client, keys, settings.spec, p.spec_checked, &waited, &busy_key,
                                          *p.series, context_head(), /*lend_client=*/false);
      } else {
        client = rt->client;
      }
    }
    if (client) lease = co_await acquire_async(*client, path, keys, settings.spec, &waited, &busy_key, *p.series);
    if (!lease) {
      if (settings.on_busy == OnBusy::fail) throw_busy(settings.spec, busy_key, waited);
      co_return;  // skip / fallback: the proxy decides what the call returns
    }
    std::exception_ptr error;
    {
      // The lease is in the call's context while the rest runs, and its
      // loss cancels the rest at its pending co_await (terminal): a loss a
      // renewal found, a fixed ttl's end (the renewer watches a lease that
      // is listened to), max_hold, or a forced unlock.
      ContextPush in_context(LeaseControl::chain_link(lease.shared(), context_head(), /*fresh=*/!lease.reentrant()));
      struct LossCancels {
        CallCell& cell;
        LeaseCore& lease;
        ~LossCancels() { cell.forget_loss(lease); }  // the rest ended: nothing left to cancel
      } loss_cancels{*AsyncCallAccess::call(inv)->cell, state(*lease.shared())};
      loss_cancels.cell.arm_loss(loss_cancels.lease);
      co_await proceed_before_cleanup(inv, error);
    }
    if (error) {
      // Given back at once and quietly: the body's exception is what the
      // caller gets, unless the loss of the lease cancelled the body.
      const bool lost = lease.lease().lost() && is_aborted(error);
      const std::string key = lease.lease().key();
      const std::string cause = lost ? lease.lease().lost_cause() : std::string();
      co_await release_async(lease, path, /*may_throw=*/false);
      if (lost) throw LeaseLost(key, cause + "; the body was cancelled at its next co_await");
      std::rethrow_exception(error);
    }
    if (path.in_process)  // (inline: no coroutine frame)
      lease.release();
    else
      co_await release_async(lease, path, /*may_throw=*/true);
  }
};

}  // namespace
}  // namespace weave::detail

namespace WEAVE_NAMESPACE {
// Weave::asio makes the built-in `lock` asynchronous when it is linked
// (in a static link, -u weave_link_asio keeps this object: REGISTERS in
// src/CMakeLists.txt).
extern "C" const char weave_link_asio = 0;

namespace {
[[maybe_unused]] const bool async_lock_registered = [] {
  detail::register_async_builtin<detail::AsyncLockInterceptor>("lock");
  return true;
}();
}  // namespace
}  // namespace WEAVE_NAMESPACE
