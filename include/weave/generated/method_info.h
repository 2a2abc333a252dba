// weave/generated/method_info.h — the static description weavegen emits for
// each woven method (one constant per method). Generated code's ABI.
#pragma once

#include "weave/abi.h"

#include <span>
#include <string_view>

#include "weave/annotation.h"

namespace WEAVE_NAMESPACE {

struct ResultCodec;
struct StoredCallCodec;

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
  // How a worker re-makes a stored call (weave/generated/stored_call.h); set
  // by weavegen only when an annotation stores calls ([[delay]]).
  const StoredCallCodec* stored_call = nullptr;
};

}  // namespace weave
