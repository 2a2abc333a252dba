// Stage 3 of weavegen: an annotation's arguments checked against its
// vocabulary entry, and its key templates against the real types (through
// TypeQuery, so this stage runs without libclang in tests).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attributes.h"
#include "diagnostics.h"
#include "model.h"
#include "type_query.h"
#include "vocabulary.h"

namespace weavegen {

// What validation needs to know about the annotated function besides the
// FunctionModel (names, return spelling, skip kind).
struct FunctionFacts {
  std::vector<TypeId> param_types;  // parallel to FunctionModel::params
  bool member = false, is_static = false;
  TypeId self = 0;                  // the class, for `<this.member>` in keys
  bool protected_visible = false;   // the proxy derives from the class: protected members are reachable
  std::string default_key;          // qualified name, with parameter types when overloaded
  std::string async_reason;         // non-empty: the result completes after the call returns, and why
  bool async = false;               // an asynchronous method (FunctionModel::async): woven as a coroutine
  bool returns_reference = false;   // `T&` or `T&&` (after aliases)
  bool is_noexcept = false;         // really noexcept (noexcept(false) is not)
  std::function<bool(const std::string&)> has_function;  // a function of that name in the same scope
  // The type a name written at the method means, fully qualified
  // ("::pay::Transient"), or "" when it names none declared before it.
  std::function<std::string(const std::string&)> resolve_type;
};

struct ValidatedAnnotation {
  AnnotationModel model;
  std::string fallback;  // the fallback it names, if any
  Loc fallback_loc;
};

// Checks one annotation; appends its key renderings to f.slots. Returns false
// when errors were reported.
bool validate_annotation(const RawAnnotation& raw, const AnnotationDef& def, const FunctionFacts& facts,
                         TypeQuery& types, FunctionModel& f, Reporter& rep, const std::string& path,
                         ValidatedAnnotation& out);

}  // namespace weavegen
