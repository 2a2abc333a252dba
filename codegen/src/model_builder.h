// Stage 4 of weavegen: from an annotated declaration to the Model the emitter
// prints. Decides what can be woven (and how: a proxy deriving from the class,
// or a decorator for an interface), reads parameters, defaults and
// qualifiers, and runs the validator on each annotation.
#pragma once

#include <clang-c/Index.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "clang_types.h"
#include "declarations.h"
#include "diagnostics.h"
#include "model.h"
#include "source.h"
#include "vocabulary.h"

namespace weavegen {

struct FunctionFacts;  // validator.h

class ModelBuilder {
 public:
  ModelBuilder(CXTranslationUnit tu, const Source& source, const std::vector<DeclEntry>& decls,
               const Vocabulary& vocab, Reporter& rep, Model& model)
      : tu_(tu), src_(source), decls_(decls), vocab_(vocab), rep_(rep), model_(model), types_(tu) {}

  // One annotated declaration.
  void add(const DeclEntry& d, const std::vector<const RawAnnotation*>& annotations);
  // After every declaration: decorators' forwarders, access warnings.
  void finish();

 private:
  std::string unsupported(CXCursor c, const DeclEntry& d);
  bool namespaces_of(CXCursor c, std::vector<NsPart>& ns, std::string& qualified, std::string& readable, Loc at);
  ClassModel* class_for(CXCursor cls, Loc at);
  std::string cannot_decorate(CXCursor cls);
  bool read_signature(CXCursor c, bool nested, bool with_defaults, FunctionModel& f, Loc at);
  enum class Awaitable { no, yes, other_executor };
  static Awaitable asio_awaitable(CXType t, CXType& value);
  bool async_parameters_owned(const FunctionModel& f, const FunctionFacts& facts, Loc at);
  bool is_overloaded(CXCursor fn);
  bool has_function(CXCursor fn, const std::string& name);
  // What a type name written at `fn` means, fully qualified ("::pay::Transient"),
  // looked up from fn's scope outward as C++ would (using-directives aside);
  // "" when the translation unit declares no such type.
  std::string resolve_type(CXCursor fn, const std::string& name);
  void add_forwarders(ClassModel& cls, CXCursor cursor);
  void warn_mixed_access();
  // The source of [from-token, end) with every unqualified name replaced by
  // its fully qualified one (a nested class's proxy lives at namespace scope).
  std::string qualified_text(std::vector<Token>::const_iterator from, unsigned end) const;

  CXTranslationUnit tu_;
  const Source& src_;
  const std::vector<DeclEntry>& decls_;
  const Vocabulary& vocab_;
  Reporter& rep_;
  Model& model_;
  ClangTypes types_;
  std::map<std::string, std::size_t> class_index_;  // usr -> model_.classes index
  std::map<std::string, CXCursor> class_cursor_;    // usr -> the class
  std::map<std::string, std::set<std::string>> annotated_;  // decorator class usr -> annotated method signatures
  int next_id_ = 0;
  std::set<std::string> type_names_;  // every type the translation unit declares, fully qualified (resolve_type)
  bool type_names_read_ = false;
};

}  // namespace weavegen
