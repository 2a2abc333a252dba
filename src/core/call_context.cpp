#include "call_context.h"

namespace WEAVE_NAMESPACE {
namespace detail {

// Both stay out of line: clang++ 14 may keep a thread_local's address across
// a co_await when its access is inlined into a coroutine (docs/async.md).
[[gnu::noinline]] std::shared_ptr<const ContextLink>& context_head() noexcept {
  thread_local std::shared_ptr<const ContextLink> head;
  return head;
}

[[gnu::noinline]] InstalledCell& current_cell() noexcept {
  thread_local InstalledCell cell;
  return cell;
}

}  // namespace detail

CallContext CallContext::capture() noexcept { return detail::CallContextAccess::make(detail::context_head()); }

CallContext::Scope::Scope(const CallContext& ctx) noexcept : previous_(detail::context_head()) {
  detail::set_context_head(detail::CallContextAccess::head(ctx));
}

CallContext::Scope::~Scope() { detail::set_context_head(std::move(previous_)); }

}  // namespace weave
