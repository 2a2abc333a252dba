// The running call's context (weave/call_context.h): an immutable, shareable
// chain of what the call holds, innermost first. Each feature pushes a link
// while its body runs and restores the previous head afterwards; a link keeps
// what it names alive (memory only: ownership stays with the call).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

#include "weave/abi.h"
#include "weave/call_context.h"
#include "weave/held_lease.h"
#include "core/process.h"
#include "core/stop_join.h"

namespace WEAVE_NAMESPACE {
namespace detail {

enum class HeldKind : std::uint8_t { lock, dedupe, semaphore, tick, deadline };

class CallDeadline;  // core/call_stop.h

struct ContextLink {
  // A weave::Lease (lock), weave::DedupeClaim (dedupe), weave::SemaphorePermit
  // or a tick's lease; null for a deadline.
  HeldLease* held = nullptr;
  HeldKind kind = HeldKind::lock;
  std::shared_ptr<const ContextLink> parent;
  const CallDeadline* deadline = nullptr;  // kind deadline: a [[timeout]]'s scope
  // The call's stop token from this link outward, when it joins several
  // (core/call_stop.cpp): made on first ask.
  StopJoinCache joined;

  ContextLink() = default;
  ContextLink(HeldLease* h, HeldKind k, std::shared_ptr<const ContextLink> p) noexcept
      : held(h), kind(k), parent(std::move(p)) {}
};

// The context of one asynchronous call between its resumptions (src/async:
// each handler of the call installs it as the thread's and sets
// current_cell()). Written through by set_context_head(), so a handler of
// the call that starts at once on another thread (a parallel branch the
// body spawned) sees what this one pushed. The lock is for such handlers.
struct ContextCell {
  SpinLock lock;
  std::shared_ptr<const ContextLink> head WEAVE_GUARDED_BY(lock);
  // The call the cell serves: a cell is reused by later calls (CallCell),
  // and a write for one that ended is dropped.
  std::uint64_t generation WEAVE_GUARDED_BY(lock) = 0;

  // Sets the head of the call of `gen`, if the cell still serves it.
  void store(std::uint64_t gen, std::shared_ptr<const ContextLink> h) {
    std::shared_ptr<const ContextLink> old;
    Guard g(lock);
    if (generation == gen) old = std::exchange(head, std::move(h));  // (`old` dies after the lock)
  }
  // A new call's first head, and its generation: before any other thread
  // knows the cell (no lock yet).
  std::uint64_t begin(std::shared_ptr<const ContextLink> h) WEAVE_NO_THREAD_SAFETY_ANALYSIS {
    head = std::move(h);
    return generation;
  }
};

// This thread's context: the head of the running call's chain (null outside
// a call). Read it here; change it with set_context_head().
std::shared_ptr<const ContextLink>& context_head() noexcept;
// The asynchronous call whose handler this thread runs (its cell and
// generation), or none.
struct InstalledCell {
  ContextCell* cell = nullptr;
  std::uint64_t generation = 0;
};
InstalledCell& current_cell() noexcept;
// Sets this thread's context (`here`: its context_head()), and the running
// asynchronous call's.
inline void set_context_head(std::shared_ptr<const ContextLink>& here, std::shared_ptr<const ContextLink> head) noexcept {
  if (const InstalledCell& c = current_cell(); c.cell) c.cell->store(c.generation, head);
  here = std::move(head);
}
inline void set_context_head(std::shared_ptr<const ContextLink> head) noexcept {
  set_context_head(context_head(), std::move(head));
}

// The innermost link of `kind` whose held lease satisfies `pred`, or null.
template <class Pred>
const ContextLink* find_in_context(HeldKind kind, Pred&& pred) noexcept {
  for (const ContextLink* n = context_head().get(); n; n = n->parent.get())
    if (n->kind == kind && n->held && pred(*n->held)) return n;
  return nullptr;
}

// Pushes a link for the scope's lifetime; restores the previous head, also
// on throw. In a coroutine (an asynchronous call) the push lasts across
// co_await: it is written to the call's cell, which every resumption
// installs. A coroutine destroyed without resuming runs this on a thread that
// is not running the call: that thread's context is left alone.
class ContextPush {
 public:
  // (The previous head is moved out, not copied: no count changes hands.)
  explicit ContextPush(std::shared_ptr<const ContextLink> link) noexcept
      : pushed_(link.get()), previous_(std::move(context_head())) {
    set_context_head(std::move(link));
  }
  // For a blocking call, which stays on its thread until the scope ends:
  // `here` is the thread's context_head(), read once by the caller (never
  // in a coroutine: it may resume on another thread).
  ContextPush(std::shared_ptr<const ContextLink>& here, std::shared_ptr<const ContextLink> link) noexcept
      : here_(&here), pushed_(link.get()), previous_(std::move(here)) {
    set_context_head(here, std::move(link));
  }
  ~ContextPush() { pop(); }
  // Ends the push before the scope does: the previous head is back, and what
  // was pushed is handed out (null when the head is no longer it: then, as
  // at the scope's end, the head is left alone).
  std::shared_ptr<const ContextLink> pop() noexcept {
    std::shared_ptr<const ContextLink> pushed;
    std::shared_ptr<const ContextLink>& head = here_ ? *here_ : context_head();
    if (pushed_ && head.get() == pushed_) {
      pushed = std::move(head);
      set_context_head(head, std::move(previous_));
    }
    pushed_ = nullptr;
    return pushed;
  }
  ContextPush(const ContextPush&) = delete;
  ContextPush& operator=(const ContextPush&) = delete;

 private:
  std::shared_ptr<const ContextLink>* here_ = nullptr;  // null: read again at the end
  const ContextLink* pushed_;  // null once popped
  std::shared_ptr<const ContextLink> previous_;
};

struct CallContextAccess {
  static const std::shared_ptr<const detail::ContextLink>& head(const CallContext& c) noexcept { return c.head_; }
  static CallContext make(std::shared_ptr<const detail::ContextLink> head) noexcept {
    CallContext c;
    c.head_ = std::move(head);
    return c;
  }
};

}  // namespace detail
}  // namespace weave
