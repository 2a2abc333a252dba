// What the validator may ask about C++ types. A small interface, so annotation
// and key-template checking is tested without libclang (tests/codegen) and
// answered by libclang in weavegen (clang_types.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weavegen {

// A type known to a TypeQuery; 0 is "unknown here" (dependent or unexposed):
// such steps are left to the C++ compiler, which sees the generated code.
using TypeId = std::uint32_t;

enum class TypeShape { unknown, pointer, record, other };  // references and cv stripped

// How a parameter of a type receives its argument (after aliases).
enum class Passing { value, const_reference, reference, rvalue_reference };

struct MemberInfo {
  enum Kind { field, method } kind = field;
  enum Access { public_, protected_, private_ } access = public_;
  bool callable_without_arguments = false;  // method: no parameters, or every one defaulted
  bool is_const = false;                    // method
  TypeId type = 0;                          // field type, or method result
};

struct MemberLookup {
  std::vector<MemberInfo> found;       // every member of that name (overloads)
  std::vector<std::string> all_names;  // every member name seen, for "did you mean"
  bool uncertain = false;              // dependent bases were not searched
};

struct ArrowTarget {
  enum State { ok, unknown, not_pointer } state = unknown;
  TypeId pointee = 0;
};

class TypeQuery {
 public:
  virtual ~TypeQuery() = default;
  virtual std::string written(TypeId t) = 0;   // as written, without references ("const Item *")
  virtual std::string name(TypeId t) = 0;      // canonical, without references and top-level cv ("Item")
  virtual TypeShape shape(TypeId t) = 0;
  virtual ArrowTarget arrow(TypeId t) = 0;     // what `->` on a value of t reaches
  virtual MemberLookup members(TypeId record, const std::string& name) = 0;
  virtual bool formattable(TypeId t) = 0;      // weave::append_key can render it
  // False only when the type is known not to be copy-constructible (a
  // deleted copy constructor, or a move constructor and no copy one); the
  // generated code's static_assert catches the rest.
  virtual bool copyable(TypeId) { return true; }
  virtual Passing passing(TypeId) { return Passing::value; }
};

}  // namespace weavegen
