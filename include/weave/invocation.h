// weave/invocation.h — one call through a woven method, as interceptors see it.
//
// An Invocation names the method, gives read access to its arguments, and
// runs the rest of the chain with proceed():
//
//   void around(weave::Invocation& inv) override {
//     auto t0 = std::chrono::steady_clock::now();
//     inv.proceed();                                   // next interceptor, then the method
//     log(inv.method(), inv.arg(0).text(), std::chrono::steady_clock::now() - t0);
//   }
//
// An interceptor that returns without calling proceed() skips the method: the
// proxy then returns what the method's skip rule says (nothing for void,
// std::nullopt for std::optional, the annotation's fallback), or throws
// weave::UsageError when the method has no way to skip.
#pragma once

#include "weave/abi.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

#include "weave/annotation.h"
#include "weave/error.h"
#include "weave/key.h"

namespace WEAVE_NAMESPACE {

// A read-only, type-checked view of one argument of the call.
class WEAVE_API ArgRef {
 public:
  template <class T>
  explicit ArgRef(const T& value) noexcept
      : ptr_(&value), type_(&typeid(T)), append_(formatter<T>()) {}

  const std::type_info& type() const noexcept { return *type_; }
  // The argument if it has exactly type T (cv/ref stripped), else nullptr.
  template <class T>
  const T* get() const noexcept {
    return typeid(T) == *type_ ? static_cast<const T*>(ptr_) : nullptr;
  }
  // False when the type has no key formatting (see weave/key.h).
  bool formattable() const noexcept { return append_ != nullptr; }
  // The value as key text; throws UsageError when not formattable.
  std::string text() const;

 private:
  template <class T>
  static void append_impl(std::string& out, const void* p) {
    if constexpr (is_key_formattable_v<T>) append_key(out, *static_cast<const T*>(p));
  }
  template <class T>
  static constexpr void (*formatter())(std::string&, const void*) {
    return is_key_formattable_v<T> ? &append_impl<T> : nullptr;
  }
  const void* ptr_;
  const std::type_info* type_;
  void (*append_)(std::string&, const void*);

};

struct MethodInfo;
struct ResultCodec;
struct StoredCallCodec;
class Invocation;
namespace detail {

class DetachedCall;  // weave/generated/chain.h
struct DetachSource;
struct InvocationAccess;  // src/core: how run_chain sets a call up

// The rest of a chain (the interceptors after the one that detached, then the
// method) with copied arguments, to run later on another thread. Empty when
// the call could not be detached. Holding one keeps its owner's destructor
// waiting (retire_detached).
class WEAVE_API Detached {
 public:
  Detached() noexcept;
  Detached(Detached&&) noexcept;
  Detached& operator=(Detached&&) noexcept;
  ~Detached();
  explicit operator bool() const noexcept { return call_ != nullptr; }
  // Runs `body` with an Invocation standing where detach() was called:
  // body's proceed() runs the rest of the chain. Once.
  template <class F>
  void run(F&& body) {
    run_with([](Invocation& inv, void* f) { (*static_cast<std::remove_reference_t<F>*>(f))(inv); }, &body);
  }

 private:
  friend Invocation;  // the enclosing namespace's
  friend InvocationAccess;  // core makes one for a stored call too
  void run_with(void (*body)(Invocation&, void*), void* ctx);
  void release() noexcept;
  std::unique_ptr<DetachedCall> call_;
  const MethodInfo* method_ = nullptr;
  const void* chain_ = nullptr;
  std::size_t depth_ = 0;
  void* registry_ = nullptr;  // where the owner was counted
  bool stored_ = false;       // re-made from a stored call (run_stored_call)
};

}  // namespace detail

class WEAVE_API Invocation {
 public:
  // A call of `target(target_ctx)` with no interceptors: proceed() runs the
  // target (a null target is a UsageError). Woven methods get theirs, with
  // the method's chain, from weave::detail::run_chain.
  Invocation(const MethodInfo& method, std::span<const ArgRef> args,
             std::span<const std::string> rendered, void (*target)(void*), void* target_ctx,
             void* result_slot = nullptr) noexcept;
  Invocation(const Invocation&) = delete;
  Invocation& operator=(const Invocation&) = delete;

  // "shop::OrderService::pay"
  std::string_view method() const noexcept;
  // The header and line the method is declared at.
  std::string_view file() const noexcept;
  int line() const noexcept;

  std::size_t arg_count() const noexcept { return args_.size(); }
  std::span<const ArgRef> args() const noexcept { return args_; }
  const ArgRef& arg(std::size_t i) const;
  std::string_view arg_name(std::size_t i) const;

  // The annotation of the interceptor that is running now.
  const Annotation& annotation() const;
  // What the running interceptor's prepare() returned for this method (null
  // if nothing); T must be the type it made.
  template <class T>
  const T* prepared() const noexcept {
    return static_cast<const T*>(prepared_untyped());
  }

  // Runs the next interceptor, or the method itself after the last one.
  // Exceptions from the method pass through. Calling it again after the
  // method returned normally is a UsageError.
  void proceed();
  // True once the method itself has returned normally (or an interceptor
  // completed the call with a result of its own, below).
  bool proceeded() const noexcept { return target_done_; }

  // ---- results, for interceptors that keep them ([[cache]], [[dedupe]]) ----
  // How to read and write this method's result (weave/result_codec.h); null
  // unless one of its annotations stores results (weavegen decides).
  const ResultCodec* result_codec() const noexcept;
  // The result once proceeded() (null before, or without a codec).
  const void* result() const noexcept;
  // Completes the call without running the rest of the chain or the method:
  // the result is decoded from `json` (throws what the codec's decode throws,
  // leaving the call not completed) or copied from a value made by the
  // codec's share(). UsageError without a codec or after the call completed.
  void complete_from_json(std::string_view json);
  void complete_from_shared(const void* value);

  // ---- running the rest of the call later ([[cache(refresh_after)]]) ----
  // True when this call can be copied to run again after it returned: its
  // proxy emits copies (weavegen's does when an annotation's argument
  // "detaches", e.g. refresh_after), and the call is not itself a detached one.
  bool can_detach() const noexcept;
  // Copies the arguments now; the copy runs the interceptors after the
  // running one, then the method (Detached::run). Empty when !can_detach()
  // or the object is being destroyed. This call goes on as before.
  detail::Detached detach();

  // ---- calls kept to run later, perhaps elsewhere ([[delay]]) ----
  // How this method's calls are stored (weave/generated/stored_call.h): its
  // codec's encode(args()) is the call as JSON. Null unless one of its
  // annotations stores calls (vocabulary "stores_call"; weavegen decides).
  const StoredCallCodec* stored_call() const noexcept;
  // True when this call is a stored one run by a worker
  // (detail::run_stored_call): only the interceptors after the one that
  // stored it run, then the method. The storing interceptor, should it see
  // such a call, just proceeds.
  bool replaying_stored_call() const noexcept { return stored_replay_; }

 private:
  friend struct detail::InvocationAccess;
  friend class detail::Detached;
  const ResultCodec& codec_for_completion() const;
  // Makes interceptor `depth` - 1 the running one (0: none): the view
  // annotation() and prepared() give.
  void at_level(std::size_t depth) noexcept;
  const MethodInfo* method_;
  std::span<const ArgRef> args_;
  std::span<const std::string> rendered_;
  void (*target_)(void*);
  void* target_ctx_;
  void* result_slot_;
  const void* chain_;            // resolved interceptors (detail): never null
  std::size_t depth_ = 0;        // index of the running interceptor + 1
  Annotation current_{empty_spec(), {}};
  bool target_done_ = false;
  const detail::DetachSource* detach_ = nullptr;
  bool stored_replay_ = false;
  static const AnnotationSpec& empty_spec() noexcept;
  const void* prepared_untyped() const noexcept;
};

}  // namespace weave
