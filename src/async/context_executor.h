// The executor an asynchronous call runs on: the caller's, wrapped so that
// every handler it runs (each resumption of the call's coroutines, whichever
// thread runs it) runs with the call's context (core/call_context.h)
// installed as the thread's, and the thread's own put back afterwards. This
// is how current_lease() and lock reentrancy follow a coroutine across
// co_await without a thread owning anything.
#pragma once

#include <boost/asio/execution.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/require.hpp>
#include <memory>
#include <mutex>
#include <utility>

#include "core/call_context.h"
#include "core/process.h"

namespace WEAVE_NAMESPACE::detail {

// The context of one asynchronous call between two of its handlers. A
// handler starts from it and leaves its own end state in it, so what the
// call pushes (a lease while the body runs, a LeaseScope) lasts across
// co_await until it is popped. The lock is for handlers of one call run at
// once on two threads (the branches of a parallel group): each writes back
// its own end state, the last one wins.
struct ContextCell {
  SpinLock lock;
  std::shared_ptr<const ContextLink> head;

  std::shared_ptr<const ContextLink> load() {
    std::lock_guard g(lock);
    return head;
  }
  void store(std::shared_ptr<const ContextLink> h) {
    std::shared_ptr<const ContextLink> old;
    std::lock_guard g(lock);
    old = std::exchange(head, std::move(h));  // (`old` dies after the lock)
  }
};

template <class Inner>
class ContextExecutor {
 public:
  ContextExecutor(Inner inner, std::shared_ptr<ContextCell> cell) noexcept
      : inner_(std::move(inner)), cell_(std::move(cell)) {}

  template <class F>
  void execute(F&& f) const {
    inner_.execute([f = std::forward<F>(f), cell = cell_]() mutable {
      struct Installed {
        ContextCell& cell;
        std::shared_ptr<const ContextLink> saved;
        ~Installed() { cell.store(std::exchange(context_head(), std::move(saved))); }
      } installed{*cell, std::exchange(context_head(), cell->load())};
      std::move(f)();
    });
  }

  friend bool operator==(const ContextExecutor& a, const ContextExecutor& b) noexcept {
    return a.inner_ == b.inner_ && a.cell_ == b.cell_;
  }
  friend bool operator!=(const ContextExecutor& a, const ContextExecutor& b) noexcept { return !(a == b); }

  template <class Property>
  auto query(const Property& p) const -> decltype(boost::asio::query(std::declval<const Inner&>(), p)) {
    return boost::asio::query(inner_, p);
  }
  template <class Property>
  auto require(const Property& p) const
      -> ContextExecutor<std::decay_t<decltype(boost::asio::require(std::declval<const Inner&>(), p))>> {
    return {boost::asio::require(inner_, p), cell_};
  }
  template <class Property>
  auto prefer(const Property& p) const
      -> ContextExecutor<std::decay_t<decltype(boost::asio::prefer(std::declval<const Inner&>(), p))>> {
    return {boost::asio::prefer(inner_, p), cell_};
  }

  const Inner& inner() const noexcept { return inner_; }
  const std::shared_ptr<ContextCell>& cell() const noexcept { return cell_; }

 private:
  Inner inner_;
  std::shared_ptr<ContextCell> cell_;
};

}  // namespace weave::detail
