// weave/decorator.h — interception for code written against interfaces.
//
// When the annotated class is an interface (abstract: implementations come
// from a factory or a DI container, and callers never name them), weavegen
// emits a decorator instead of a Woven<T> proxy. It implements the interface,
// holds any implementation, runs the interceptor chain around the annotated
// methods and forwards every other public virtual method:
//
//   class PaymentService {
//    public:
//     virtual ~PaymentService() = default;
//     [[lock(key="pay:<order_id>")]] virtual Receipt pay(const std::string& order_id) = 0;
//   };
//
//   #include "payment_service.weave.h"
//   std::shared_ptr<PaymentService> svc = weave::decorate<PaymentService>(make_payment_service());
//   svc->pay("o-1");   // locks pay:o-1, then calls the implementation's pay
//
// decorate() takes a std::shared_ptr or std::unique_ptr to any implementation
// (shared ownership), or a reference (the caller keeps it alive).
//
// An annotated static method of the interface (a factory such as leveldb's
// `static Status DB::Open(const Options&, const std::string&, DB**)`) is
// woven on the decorator's type: call weave::Decorated<DB>::Open(...).
#pragma once

#include "weave/abi.h"

#include <memory>
#include <type_traits>
#include <utility>

#include "weave/error.h"

namespace WEAVE_NAMESPACE {

namespace detail {
template <class>
inline constexpr bool no_decorator_for = false;
}  // namespace detail

// Specialised by generated code: decorator_traits<I>::type is I's decorator.
template <class I>
struct decorator_traits {
  static_assert(detail::no_decorator_for<I>,
                "weave::decorate<I>: no decorator was generated for I. Annotate at least one of I's pure virtual "
                "methods (e.g. [[lock]]), list I's header in weave_generate(<target> HEADERS ...), and include "
                "its .weave.h before calling weave::decorate<I>.");
};

template <class I>
using Decorated = typename decorator_traits<I>::type;

template <class I, class Impl>
  requires std::is_base_of_v<I, Impl>
std::shared_ptr<I> decorate(std::shared_ptr<Impl> implementation) {
  if (!implementation) throw UsageError("weave::decorate: the implementation is null");
  return std::make_shared<Decorated<I>>(std::shared_ptr<I>(std::move(implementation)));
}

template <class I, class Impl, class Deleter>
  requires std::is_base_of_v<I, Impl>
std::shared_ptr<I> decorate(std::unique_ptr<Impl, Deleter> implementation) {
  return decorate<I>(std::shared_ptr<Impl>(std::move(implementation)));
}

// Does not own `implementation`: it must outlive the decorator.
template <class I>
std::shared_ptr<I> decorate(I& implementation) {
  return decorate<I>(std::shared_ptr<I>(std::shared_ptr<I>{}, &implementation));
}

}  // namespace weave
