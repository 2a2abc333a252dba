// Interceptors that ship with Weave, registered by their own library when it
// is linked (Weave::lock registers "lock") and made on first use, so a
// program that never touches a lock never starts a backend. Weave::core
// itself knows no feature.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "weave/interceptor.h"

namespace WEAVE_NAMESPACE::detail {

using BuiltinFactory = std::shared_ptr<Interceptor> (*)();

// Called from a library's static initialisation; the last registration of a
// name wins.
void register_builtin_interceptor(std::string_view annotation_name, BuiltinFactory factory);

// Another library's addition to a built-in interceptor (Weave::asio makes
// `lock` an AsyncInterceptor around the blocking one): `decorate` gets what
// the factory made and returns what is installed. From static
// initialisation; applied whatever the order the libraries start in.
using BuiltinDecorator = std::shared_ptr<Interceptor> (*)(std::shared_ptr<Interceptor> made);
void register_builtin_decorator(std::string_view annotation_name, BuiltinDecorator decorate);

// The built-in interceptor for `annotation_name` (decorated), made now, or null.
std::shared_ptr<Interceptor> make_builtin_interceptor(std::string_view annotation_name);

}  // namespace weave::detail
