// weave/woven.h — naming the generated proxy of a class.
//
// For every class with annotated methods weavegen emits a proxy class that
// derives from it and wraps the annotated methods. Name it as
// weave::Woven<T>; it has T's constructors, so it replaces T at creation:
//
//   #include "order_service.weave.h"
//   auto svc = std::make_shared<weave::Woven<shop::OrderService>>(/* T's ctor args */);
//   std::shared_ptr<shop::OrderService> as_base = svc;   // virtual methods stay woven
//
// An interface (an abstract class) gets a decorator instead, named
// weave::Decorated<I> (weave/decorator.h); it has no Woven<I>.
//
// Annotated free functions get an entry point with the same signature in a
// nested namespace `woven`: `shop::transfer` becomes `shop::woven::transfer`.
#pragma once

#include "weave/abi.h"

namespace WEAVE_NAMESPACE {

namespace detail {
template <class>
inline constexpr bool no_proxy_for = false;
}  // namespace detail

// Specialised by generated code: woven_traits<T>::type is T's proxy class.
template <class T>
struct woven_traits {
  static_assert(detail::no_proxy_for<T>,
                "weave::Woven<T>: no proxy was generated for T. Annotate at least one of T's methods "
                "(e.g. [[lock]]), list T's header in weave_generate(<target> HEADERS ...), and include "
                "its .weave.h before naming weave::Woven<T>. If T is an interface (abstract), weavegen "
                "generates a decorator instead: weave::decorate<T>(implementation), and T's annotated static "
                "methods are called as weave::Decorated<T>::f(...) (weave/decorator.h).");
};

template <class T>
using Woven = typename woven_traits<T>::type;

}  // namespace weave
