// Interceptors that ship with Weave, bound on first use so a program that
// never touches a lock never starts a backend.
#pragma once

#include <memory>
#include <string_view>

#include "weave/interceptor.h"

namespace weave::detail {
// The built-in interceptor for `annotation_name` ("lock"), or null.
// Defined in src/lock/.
std::shared_ptr<Interceptor> make_builtin_interceptor(std::string_view annotation_name);
}  // namespace weave::detail
