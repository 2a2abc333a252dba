// weave/generated/invoke.h — what a woven method's body calls:
// detail::invoke<R>(info, args, rendered, target, on_skip[, copyable]) runs
// the chain of `info` around `target` and hands back the result (or what the
// method's skip rule says). Generated code's ABI.
#pragma once

#include "weave/abi.h"

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weave/generated/chain.h"
#include "weave/generated/method_info.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE::detail {

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

// A call that can be re-made later from copies of its arguments (the proxy
// of a method whose annotations may reload in the background): `fn` calls
// the method with the copies (as lvalues), `owner` is the woven object or null.
template <class R, class Fn, class... A>
struct Detachable {
  const void* owner;
  Fn fn;
  std::tuple<const A&...> args;
};
template <class R, class Fn, class... A>
Detachable<R, Fn, A...> detachable(const void* owner, Fn fn, const A&... args) {
  static_assert((std::is_copy_constructible_v<A> && ...),
                "weave: a method that reloads in the background ([[cache(refresh_after=...)]]) keeps copies of "
                "its arguments: every parameter type must be copy-constructible (pass it by shared_ptr, or "
                "drop refresh_after)");
  return {owner, std::move(fn), std::tuple<const A&...>(args...)};
}

template <class R, class Fn, class... A>
class DetachedCopy final : public DetachedCall {
 public:
  DetachedCopy(const Detachable<R, Fn, A...>& d, std::span<const std::string> rendered)
      : copies_(std::make_from_tuple<std::tuple<A...>>(d.args)),
        rendered_(rendered.begin(), rendered.end()),
        fn_(d.fn),
        refs_(std::apply([](const auto&... c) { return std::array<ArgRef, sizeof...(A)>{ArgRef(c)...}; }, copies_)) {
    owner = d.owner;
  }
  std::span<const ArgRef> args() const noexcept override { return refs_; }
  std::span<const std::string> rendered() const noexcept override { return rendered_; }
  void* result_slot() noexcept override {
    if constexpr (!std::is_void_v<R> && !std::is_reference_v<R>) return &slot_.value;
    else return nullptr;
  }
  void run_target() override {
    auto call = [this]() -> R { return std::apply(fn_, copies_); };
    slot_.run(call);
  }

 private:
  std::tuple<A...> copies_;
  std::vector<std::string> rendered_;
  Fn fn_;
  std::array<ArgRef, sizeof...(A)> refs_;
  ResultSlot<R> slot_;
};

// The DetachedCall of `d` with copies of its arguments and of `rendered`.
template <class R, class Fn, class... A>
std::unique_ptr<DetachedCall> detached_copy(const Detachable<R, Fn, A...>& d, std::span<const std::string> rendered) {
  return std::make_unique<DetachedCopy<R, Fn, A...>>(d, rendered);
}

template <class R, class Target, class OnSkip>
R invoke(const MethodInfo& info, std::span<const ArgRef> args,
         std::span<const std::string> rendered, Target&& target, OnSkip&& on_skip,
         const DetachSource* detach = nullptr) {
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
                             &ctx, result_slot, detach);
  if (ran) return ctx.slot.take();
  if constexpr (std::is_same_v<std::remove_cvref_t<OnSkip>, CannotSkip>) {
    throw_cannot_skip(info);
  } else {
    return on_skip();
  }
}

// invoke(), for a call that interceptors may re-run later with copies of its
// arguments (Invocation::detach): the copies are made only if one asks.
template <class R, class Target, class OnSkip, class Fn, class... A>
R invoke(const MethodInfo& info, std::span<const ArgRef> args, std::span<const std::string> rendered,
         Target&& target, OnSkip&& on_skip, const Detachable<R, Fn, A...>& copyable) {
  struct Source {
    const Detachable<R, Fn, A...>* d;
    std::span<const std::string> rendered;
  } source{&copyable, rendered};
  const DetachSource detach{[](const void* p) -> std::unique_ptr<DetachedCall> {
                              const auto* s = static_cast<const Source*>(p);
                              return detached_copy(*s->d, s->rendered);
                            },
                            &source};
  return invoke<R>(info, args, rendered, std::forward<Target>(target), std::forward<OnSkip>(on_skip), &detach);
}

}  // namespace weave::detail
