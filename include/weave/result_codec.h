// weave/result_codec.h — how an interceptor keeps a woven method's result
// without knowing its type: as JSON text and as a shared immutable copy.
//
// weavegen emits one ResultCodec per method whose annotations store results
// ([[cache]], [[dedupe(on_duplicate=replay)]]), made by
// detail::make_result_codec<R> (weave/json_codec.h); an interceptor reaches
// it through Invocation::result_codec() and fills the result with
// Invocation::complete_from_json() / complete_from_shared().
//
//   if (const weave::ResultCodec* codec = inv.result_codec()) {
//     inv.proceed();
//     std::string json = codec->encode(inv.result());
//   }
#pragma once

#include "weave/abi.h"

#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

namespace WEAVE_NAMESPACE {

struct WEAVE_API ResultCodec {
  std::string_view type_name;  // the return type as declared ("shop::Product")
  // The result's type: two methods' shared copies are interchangeable only
  // when their types are equal (same_type()).
  const std::type_info* type;
  // The result -> JSON text. Throws what to_json throws.
  std::string (*encode)(const void* result);
  // JSON text -> a result placed in `slot`. Throws nlohmann::json::exception
  // when the text does not fit the type (stored by another version).
  void (*decode)(std::string_view json, void* slot);
  // An immutable copy of the result, shared by every later hit.
  std::shared_ptr<const void> (*share)(const void* result);
  // A copy of a shared value (made by share) placed in `slot`.
  void (*assign)(void* slot, const void* shared);
  // True for an empty optional or pointer.
  bool (*empty)(const void* result);
  // The result held in `slot`, or null while it holds none.
  const void* (*peek)(const void* slot);

  // True when a value share()d by `other` may be assign()ed by this codec.
  bool same_type(const ResultCodec& other) const noexcept { return this == &other || *type == *other.type; }
};

}  // namespace weave
