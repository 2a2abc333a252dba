// The executor an asynchronous call runs on: the caller's, wrapped so that
// every handler it runs (each resumption of the call's coroutines, whichever
// thread runs it) runs with the call's context (core/call_context.h)
// installed as the thread's, and the thread's own put back afterwards; what
// the call pushes meanwhile is written through to its cell
// (set_context_head). This is how current_lease() and lock reentrancy
// follow a coroutine across co_await without a thread owning anything.
#pragma once

#include <boost/asio/execution.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/require.hpp>
#include <memory>
#include <utility>

#include "core/call_context.h"

namespace WEAVE_NAMESPACE::detail {

template <class Inner>
class ContextExecutor {
 public:
  ContextExecutor(Inner inner, std::shared_ptr<ContextCell> cell) noexcept
      : inner_(std::move(inner)), cell_(std::move(cell)) {}

  template <class F>
  void execute(F&& f) const {
    inner_.execute([f = std::forward<F>(f), cell = cell_]() mutable {
      struct Installed {
        std::shared_ptr<const ContextLink> saved_head;
        ContextCell* saved_cell;
        ~Installed() {
          context_head() = std::move(saved_head);
          current_cell() = saved_cell;
        }
      } installed{std::exchange(context_head(), cell->load()), std::exchange(current_cell(), cell.get())};
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

 private:
  Inner inner_;
  std::shared_ptr<ContextCell> cell_;
};

}  // namespace weave::detail
