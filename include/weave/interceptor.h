// weave/interceptor.h — the around-advice interface and the registry that
// binds annotation names to interceptors at run time.
//
// Registering your own annotation takes two steps: describe its arguments in
// a JSON vocabulary file passed to weave_generate(... ANNOTATIONS audit.json),
// and register an interceptor under the same name before the first call:
//
//   weave::InterceptorRegistry::global().add("audit", [](weave::Invocation& inv) {
//     audit_log(inv.annotation().text("event"), inv.method());
//     inv.proceed();
//   });
//
// Chain order: annotations run by their `order=` argument, lowest outermost;
// equal orders keep the order they are written in on the method. The built-in
// `lock` interceptor is registered on first use and can be replaced.
#pragma once

#include "weave/abi.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "weave/invocation.h"

namespace WEAVE_NAMESPACE {

namespace detail {
struct RegistryAccess;  // src/core/interceptor_registry.cpp
}  // namespace detail

class WEAVE_API Interceptor {
 public:
  virtual ~Interceptor() = default;
  // Called once per woven method (and registry change) when its chain is
  // built, with the method's annotation: parse the static arguments here
  // (durations, enum_index) and read the result in around() with
  // inv.prepared<T>(), so a call does no string work. Every call of a woven
  // method runs its chain through here, also for specs written by hand.
  // Throwing here fails the call before any interceptor runs (a UsageError
  // naming the argument, say: the chain adds the annotation, the method and
  // where it stands to a weave::Error's what()). Default: nothing.
  virtual std::shared_ptr<const void> prepare(const AnnotationSpec& annotation);
  // Do work, call inv.proceed() (or not, to skip the method), do work.
  virtual void around(Invocation& inv) = 0;
};

class WEAVE_API InterceptorRegistry {
 public:
  InterceptorRegistry();
  ~InterceptorRegistry();
  InterceptorRegistry(const InterceptorRegistry&) = delete;
  InterceptorRegistry& operator=(const InterceptorRegistry&) = delete;

  // The registry generated proxies use.
  static InterceptorRegistry& global();

  // Binds `annotation` to `interceptor`, replacing any earlier binding.
  void add(std::string annotation, std::shared_ptr<Interceptor> interceptor);
  void add(std::string annotation, std::function<void(Invocation&)> around);
  // Returns false when nothing was bound to the name.
  bool remove(std::string_view annotation);
  std::shared_ptr<Interceptor> find(std::string_view annotation) const;

  // Bumped by every add/remove; proxies cache their resolved chain against it.
  std::uint64_t version() const noexcept;


 private:
  friend struct detail::RegistryAccess;  // core's chain resolution reads the version
  struct Impl;  // the bindings and their lock (in the library)
  std::unique_ptr<Impl> impl_;
};

}  // namespace weave
