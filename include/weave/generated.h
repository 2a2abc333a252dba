// weave/generated.h — the small runtime surface that weavegen's output calls.
// Not for hand-written code: the layout may change with weavegen.
//
// A woven method renders its key templates, then calls
//   weave::detail::invoke<R>(info, args, rendered, target, on_skip)
// which runs the interceptor chain of `info` around `target`.
#pragma once

#include "weave/abi.h"

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "weave/annotation.h"
#include "weave/decorator.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/key.h"
#include "weave/woven.h"

namespace WEAVE_NAMESPACE {

struct ResultCodec;

// Static description of one woven method (one constant per method).
struct WEAVE_API MethodInfo {
  std::string_view qualified_name;                // "shop::OrderService::pay"
  std::string_view file;                          // the annotated header
  int line = 0;
  std::span<const AnnotationSpec> annotations;    // already sorted by order
  std::span<const std::string_view> param_names;  // "arg<i>" where unnamed
  // How interceptors keep the result (weave/result_codec.h); set by weavegen
  // only when an annotation stores results.
  const ResultCodec* result = nullptr;
};

namespace detail {

// run_chain (declared in weave/invocation.h) runs the chain of `info` around
// `target` and returns true when the target ran to completion.

[[noreturn]] WEAVE_API void throw_cannot_skip(const MethodInfo& info);

// on_skip for methods that cannot skip (throws UsageError).
struct WEAVE_API CannotSkip {};

template <class R>
struct ResultSlot {
  std::optional<R> value;
  template <class F>
  void run(F& f) { value.emplace(f()); }
  R take() { return std::move(*value); }
};
template <class R>
struct ResultSlot<R&> {
  R* value = nullptr;
  template <class F>
  void run(F& f) { value = &f(); }
  R& take() { return *value; }
};
template <class R>
struct ResultSlot<R&&> {
  R* value = nullptr;
  template <class F>
  void run(F& f) { R&& r = f(); value = &r; }
  R&& take() { return std::move(*value); }
};
template <>
struct ResultSlot<void> {
  template <class F>
  void run(F& f) { f(); }
  void take() {}
};

template <class R, class Target, class OnSkip>
R invoke(const MethodInfo& info, std::span<const ArgRef> args,
         std::span<const std::string> rendered, Target&& target, OnSkip&& on_skip) {
  using TargetT = std::remove_reference_t<Target>;
  struct Ctx {
    TargetT* target;
    ResultSlot<R> slot;
  } ctx{&target, {}};
  void* result_slot = nullptr;
  if constexpr (!std::is_void_v<R> && !std::is_reference_v<R>) result_slot = &ctx.slot.value;
  const bool ran = run_chain(info, args, rendered,
                             [](void* p) {
                               auto* c = static_cast<Ctx*>(p);
                               c->slot.run(*c->target);
                             },
                             &ctx, result_slot);
  if (ran) return ctx.slot.take();
  if constexpr (std::is_same_v<std::remove_cvref_t<OnSkip>, CannotSkip>) {
    throw_cannot_skip(info);
  } else {
    return on_skip();
  }
}

}  // namespace detail
}  // namespace weave
