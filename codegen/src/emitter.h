// Printing the proxy header and source from the Model.
#pragma once

#include <string>

#include "model.h"

namespace weavegen {

struct EmitOptions {
  std::string include_as;          // how the proxy header includes the original header
  std::string header_path;         // output header path (as given)
  std::string source_path;         // how #line names the output source (not absolute: its file name)
  std::string display_path;        // how comments, MethodInfo::file and #line name the original header
  std::string header_from_source;  // how the source includes the proxy header
};

std::string emit_header(const Model& m, const EmitOptions& o);
std::string emit_source(const Model& m, const EmitOptions& o);

// An argument's value as generated code writes it: the weave::ArgValue of
// its kind, e.g. "::weave::ArgValue::of_duration_ms(30000)".
std::string arg_value_code(const ArgValue& v);

// What a key placeholder reads, as generated code writes it: "order.id()",
// "(*this).region_", or in a decorator "(*weave_target_).region_".
std::string key_access_code(const KeyAccess& a, bool decorator);

}  // namespace weavegen
