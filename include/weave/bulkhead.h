// weave/bulkhead.h — at most `max` calls running at once in this process,
// the others waiting their turn in arrival order for a bounded time.
//
//   weave::Bulkhead psp("psp", 16);                    // or weave::bulkhead("psp", 16): shared by name
//   weave::BulkheadSlot slot = psp.enter(50ms);        // weave::BulkheadFull after 50 ms
//   charge(order);                                     // the slot is given back when `slot` goes
//
// [[bulkhead(max=16, wait=50ms)]] does the same around a method (its calls
// share the bulkhead named by `name=`, by default the method's qualified
// name); an `awaitable` method's waiters suspend instead of holding a
// thread. The distributed limit, across processes, is weave::Semaphore.
//
// A slot given back goes to the longest waiting caller directly (no caller
// arriving meanwhile takes it first); a caller that does not wait enters only
// when a slot is free and nobody waits. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weave/abi.h"

namespace WEAVE_NAMESPACE {

namespace detail {
class BulkheadState;
}  // namespace detail

// One slot of a bulkhead, held until release() or its destruction; empty
// when none was had. Move-only; not thread-safe itself.
class WEAVE_API BulkheadSlot {
 public:
  BulkheadSlot() noexcept = default;
  BulkheadSlot(BulkheadSlot&& other) noexcept;
  BulkheadSlot& operator=(BulkheadSlot&& other) noexcept;
  ~BulkheadSlot();

  explicit operator bool() const noexcept { return state_ != nullptr; }
  // Gives the slot back now (to the first waiter, if any); the slot is
  // empty after. A no-op on an empty slot.
  void release() noexcept;

 private:
  friend class Bulkhead;
  explicit BulkheadSlot(std::shared_ptr<detail::BulkheadState> state) noexcept : state_(std::move(state)) {}
  std::shared_ptr<detail::BulkheadState> state_;
};

class WEAVE_API Bulkhead {
 public:
  // Throws UsageError for an empty name or `max` outside 1 to 1,000,000.
  Bulkhead(std::string name, std::uint32_t max);

  // A slot, waiting up to `wait` for one (0: only a free one); an empty
  // slot when none came.
  BulkheadSlot try_enter(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) const;
  // The same; none within `wait` throws weave::BulkheadFull (retryable).
  BulkheadSlot enter(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) const;

  const std::string& name() const noexcept;
  std::uint32_t max() const noexcept;
  std::uint32_t running() const noexcept;  // slots held now
  std::uint32_t waiting() const noexcept;  // callers in line now

  // For the interceptors (src/resilience/).
  const std::shared_ptr<detail::BulkheadState>& state() const noexcept { return state_; }
  // try_enter() whose slot borrows this bulkhead's state instead of sharing
  // it (no reference count, two atomic operations fewer): the slot must end
  // while this Bulkhead lives, as an interceptor's does within its call.
  BulkheadSlot try_enter_borrowed(std::chrono::milliseconds wait) const;

 private:
  explicit Bulkhead(std::shared_ptr<detail::BulkheadState> state) noexcept : state_(std::move(state)) {}
  // try_enter(), the slot holding `held` (this state, shared or borrowed).
  BulkheadSlot try_enter_holding(std::chrono::milliseconds wait, std::shared_ptr<detail::BulkheadState> held) const;
  friend Bulkhead bulkhead(std::string_view, std::uint32_t);
  std::shared_ptr<detail::BulkheadState> state_;
};

// The process-wide bulkhead called `name` (made with `max` on first use):
// every caller and every [[bulkhead(name=...)]] method naming it shares it.
// Throws UsageError when it exists with another `max`.
WEAVE_API Bulkhead bulkhead(std::string_view name, std::uint32_t max);

}  // namespace weave
