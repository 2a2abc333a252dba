// TypeQuery answered by libclang, plus the type questions only the model
// builder asks (members of a class, results that complete later).
#pragma once

#include <clang-c/Index.h>

#include <set>
#include <string>
#include <vector>

#include "type_query.h"

namespace weavegen {

class ClangTypes final : public TypeQuery {
 public:
  explicit ClangTypes(CXTranslationUnit tu) : tu_(tu) {}

  TypeId id(CXType t);  // 0 for an invalid type

  std::string written(TypeId t) override;
  std::string name(TypeId t) override;
  TypeShape shape(TypeId t) override;
  ArrowTarget arrow(TypeId t) override;
  MemberLookup members(TypeId record, const std::string& name) override;
  bool formattable(TypeId t) override;
  bool copyable(TypeId t) override;
  Passing passing(TypeId t) override;

  // Members named `name` of `record` and its bases. Implicit template
  // instantiations are searched through their template; `uncertain` is set
  // when members of dependent bases could not be searched.
  std::vector<CXCursor> find_members(CXCursor record, const std::string& name, std::set<std::string>* all,
                                     bool* uncertain = nullptr);

  // Why a call returning `t` may still be working after it returns ("" when
  // it is not): a coroutine type, an awaitable, or a future. See docs/weavegen.md.
  std::string async_reason(CXType t);

 private:
  CXType type(TypeId t) const { return types_[t - 1]; }
  void index_free_functions();

  CXTranslationUnit tu_;
  std::vector<CXType> types_;
  bool indexed_ = false;
  std::set<std::string> formattable_usrs_;  // records with weave_key / operator<<
  std::set<std::string> co_await_usrs_;     // records (or templates) with a free operator co_await
  std::vector<CXCursor> coroutine_traits_;  // specializations of std::coroutine_traits
};

// True when parameter `p` has a default argument.
bool has_default_argument(CXCursor p);

}  // namespace weavegen
