// weave/call_context.h — what the running woven call holds (its locks'
// leases, its [[dedupe]] claims), carried with the call wherever it continues.
//
// Inside a guarded method, weave::current_lease() and
// weave::current_dedupe_claim() answer from the running call's context, and a
// nested woven call on a key the call already holds re-enters its lease. The
// context is per thread; capture it where a call continues on another thread
// and install it there:
//
//   weave::CallContext ctx = weave::CallContext::capture();
//   pool.submit([ctx] { weave::CallContext::Scope in(ctx); svc.pay("1"); });  // reuses the lease
//
// Async methods (weave/asio.h) need none of this: their context travels with
// the coroutine across every co_await, whichever thread resumes it.
// Installing a context transfers nothing: the leases stay owned by the call
// that took them, which releases them as usual.
//
// weave::current_stop_token() is the call's one signal to stop early: it
// fires when a lease the call holds is lost (a lock, a [[dedupe]] claim, a
// semaphore permit, a scheduled tick) or a [[timeout]] deadline it runs
// under passes (weave/timeout.h):
//
//   for (const Row& row : rows) {
//     if (weave::current_stop_token().stop_requested()) return;  // lost, or out of time
//     copy(row);
//   }
#pragma once

#include "weave/abi.h"

#include <memory>
#include <stop_token>

namespace WEAVE_NAMESPACE {

namespace detail {
struct ContextLink;        // src/core/call_context.h
struct CallContextAccess;  // the same
}  // namespace detail

class WEAVE_API CallContext {
 public:
  CallContext() noexcept = default;
  // This thread's context, shared (cheap: one reference count).
  static CallContext capture() noexcept;
  bool empty() const noexcept { return head_ == nullptr; }

  // Installs a captured context on this thread for the scope's lifetime,
  // then restores what was there. Scopes nest; destroy them in reverse order.
  class WEAVE_API Scope {
   public:
    explicit Scope(const CallContext& ctx) noexcept;
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::shared_ptr<const detail::ContextLink> previous_;
  };

 private:
  friend struct detail::CallContextAccess;
  std::shared_ptr<const detail::ContextLink> head_;
};

// The running call's stop token (above), from this thread's context: one
// that never fires (stop_possible() false) outside a woven call, or in one
// that holds no lease and has no deadline. An `awaitable` method's deadline
// reaches its body as cancellation, not here.
WEAVE_API std::stop_token current_stop_token();

}  // namespace weave
