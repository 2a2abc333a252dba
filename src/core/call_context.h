// The running call's context (weave/call_context.h): an immutable, shareable
// chain of what the call holds, innermost first. Each feature pushes a link
// while its body runs and restores the previous head afterwards; a link keeps
// what it names alive (memory only: ownership stays with the call).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "weave/abi.h"
#include "weave/call_context.h"
#include "weave/held_lease.h"

namespace WEAVE_NAMESPACE {
namespace detail {

enum class HeldKind : std::uint8_t { lock, dedupe };

struct WEAVE_API ContextLink {
  HeldLease* held = nullptr;  // a weave::Lease (lock) or a weave::DedupeClaim (dedupe)
  HeldKind kind = HeldKind::lock;
  std::shared_ptr<const ContextLink> parent;
};

// This thread's context: the head of the running call's chain (null outside
// a call). Features assign it; async calls swap it at every resumption.
WEAVE_API std::shared_ptr<const ContextLink>& context_head() noexcept;

// The innermost link of `kind` whose held lease satisfies `pred`, or null.
template <class Pred>
const ContextLink* find_in_context(HeldKind kind, Pred&& pred) noexcept {
  for (const ContextLink* n = context_head().get(); n; n = n->parent.get())
    if (n->kind == kind && pred(*n->held)) return n;
  return nullptr;
}

// Pushes a link for the scope's lifetime; restores the previous head, also
// on throw. In a coroutine (an asynchronous call) the push lasts across
// co_await: the call's executor keeps its context between resumptions. A
// coroutine destroyed without resuming runs this on a thread that is not
// running the call: that thread's context is left alone.
class ContextPush {
 public:
  explicit ContextPush(std::shared_ptr<const ContextLink> link) noexcept
      : pushed_(link.get()), previous_(std::exchange(context_head(), std::move(link))) {}
  ~ContextPush() {
    auto& head = context_head();
    if (head.get() == pushed_) head = std::move(previous_);
  }
  ContextPush(const ContextPush&) = delete;
  ContextPush& operator=(const ContextPush&) = delete;

 private:
  const ContextLink* pushed_;
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
