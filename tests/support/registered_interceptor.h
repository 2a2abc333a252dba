// An interceptor bound to an annotation name for one test's scope: added to
// the global registry now, removed at the end of the scope.
//
//   Registered audit("audit", [&](weave::Invocation& inv) { seen.push_back(inv.method()); inv.proceed(); });
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "weave/interceptor.h"

class Registered {
 public:
  Registered(std::string name, std::function<void(weave::Invocation&)> f) : name_(std::move(name)) {
    weave::InterceptorRegistry::global().add(name_, std::move(f));
  }
  ~Registered() { weave::InterceptorRegistry::global().remove(name_); }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;

 private:
  std::string name_;
};
