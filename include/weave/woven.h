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
// Annotated free functions get an entry point with the same signature in a
// nested namespace `woven`: `shop::transfer` becomes `shop::woven::transfer`.
#pragma once

namespace weave {

// Specialised by generated code: woven_traits<T>::type is T's proxy class.
template <class T>
struct woven_traits;

template <class T>
using Woven = typename woven_traits<T>::type;

}  // namespace weave
