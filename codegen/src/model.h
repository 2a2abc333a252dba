// What the model builder hands to the emitter: validated, ready-to-print facts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace weavegen {

struct NsPart {
  std::string name;
  bool is_inline = false;
};

struct ParamModel {
  std::string name;          // as in the header, or arg<i> for unnamed parameters
  std::string type;          // spelling usable in the generated code
  std::string default_text;  // default argument source text, or ""
  bool move = false;         // forward to the target with std::move
  bool rvalue_ref = false;   // declared T&&
};

// An annotation argument's value, checked and typed: what the interceptor
// reads as a weave::ArgValue. The emitter alone writes it as C++.
namespace arg {
struct Forever {
  bool operator==(const Forever&) const = default;
};
struct DurationMs {
  std::int64_t ms = 0;
  bool operator==(const DurationMs&) const = default;
};
struct Integer {
  std::int64_t value = 0;
  bool operator==(const Integer&) const = default;
};
struct Bool {
  bool value = false;
  bool operator==(const Bool&) const = default;
};
struct Text {
  std::string text;
  bool operator==(const Text&) const = default;
};
struct Enum {
  std::string text;
  std::int64_t index = -1;  // in the vocabulary's values: interceptors switch on it
  bool operator==(const Enum&) const = default;
};
// A key template rendered per call into FunctionModel::slots[slot].
struct Template {
  std::size_t slot = 0;
  std::string source;  // as written: the metrics' label
  bool operator==(const Template&) const = default;
};
// Key templates rendered per call into slots [first, first + n).
struct TemplateList {
  std::size_t first = 0, n = 0;
  std::string sources;  // as written, joined by ","
  bool operator==(const TemplateList&) const = default;
};
// `permits` per `per_ms` milliseconds (`rate=100/s`).
struct Rate {
  std::int64_t permits = 0;
  std::int64_t per_ms = 0;
  bool operator==(const Rate&) const = default;
};
// Exception types (`retry_on=[std::system_error, pay::Transient]`): each
// fully qualified as weavegen found it, and the whole as written.
struct ExceptionTypes {
  std::vector<std::string> types;
  std::string written;
  bool operator==(const ExceptionTypes&) const = default;
};
}  // namespace arg

using ArgValue = std::variant<arg::Forever, arg::DurationMs, arg::Integer, arg::Bool, arg::Text, arg::Enum,
                              arg::Template, arg::TemplateList, arg::Rate, arg::ExceptionTypes>;

struct ArgModel {
  std::string name;
  ArgValue value;
  bool operator==(const ArgModel&) const = default;
};

struct AnnotationModel {
  std::string name;
  int order = 0;
  int line = 0, col = 0;
  std::vector<ArgModel> args;
  bool stores_call = false;  // vocabulary "stores_call" (delay)
};

// What a placeholder reads: a parameter or the object, then its members
// (`<order.customer().id>`, `<ptr->id>`, `<this.region_>`).
struct KeyAccess {
  struct Step {
    std::string member;
    bool arrow = false;  // `->`, else `.`
    bool call = false;   // `member()`
    bool operator==(const Step&) const = default;
  };
  bool self = false;  // the object; else the parameter `param`
  std::string param;
  std::vector<Step> steps;
  bool operator==(const KeyAccess&) const = default;
};

// One rendered key template: literal parts and placeholders, appended in order.
struct KeyRender {
  int line = 0;  // header line of the template (for #line)
  // The rendered text names stored state (the vocabulary's "names_state"):
  // values are %-encoded (weave::append_key), else written as they are
  // (weave::append_text).
  bool names_state = false;
  struct Part {
    bool expr = false;  // a placeholder (`access`), else literal `text`
    std::string text;
    KeyAccess access;
  };
  std::vector<Part> parts;
};

struct FunctionModel {
  int id = 0;
  bool member = false;
  std::string name;            // "pay"
  std::string qualified_name;  // "shop::OrderService::pay" (MethodInfo, lock default key)
  std::string target;          // free functions: "::shop::transfer"
  std::vector<ParamModel> params;
  std::string ret;             // return type spelling
  // An asynchronous method (it returns a task, weave/async_task.h): the proxy
  // is a coroutine awaiting detail::invoke_async<ret>. What follows about the
  // result (ret_void, ret_qualified, skip) is then about the task's value,
  // spelled `async_value`.
  bool async = false;
  std::string async_value;
  bool ret_void = false;
  // An annotation keeps the result as JSON (vocabulary "stores_result"): the
  // source gets a ResultCodec over `ret_qualified`, the return type spelled
  // fully qualified (canonical), valid at namespace scope.
  bool stores_result = false;
  std::string ret_qualified;
  // An annotation may run the call again later from copies of its arguments
  // (vocabulary "detaches": cache's refresh_after): the proxy emits how to
  // copy the call (weave::detail::detachable, Invocation::detach).
  bool detaches = false;
  // An annotation keeps the call as JSON for a worker to run later
  // (vocabulary "stores_call": delay): the proxy emits a StoredCallCodec
  // (weave/generated/stored_call.h) over `signature`, the one that stores it
  // being annotations[stored_call_annotation].
  bool stores_call = false;
  std::string signature;  // "void shop::Orders::cancel(const std::basic_string<char>&)"
  int stored_call_annotation = -1;
  bool is_const = false, is_static = false, is_virtual = false, is_protected = false;
  std::string ref_qualifier;   // "", "&", "&&"
  bool is_noexcept = false;    // really noexcept (noexcept(false) is not)
  std::vector<AnnotationModel> annotations;  // sorted by order (stable); empty: a decorator's plain forwarder
  std::vector<KeyRender> slots;
  enum class Skip { cannot, nothing, nullopt, fallback } skip = Skip::cannot;
  std::string fallback;        // name of the fallback function (Skip::fallback)
  int decl_line = 0;
  std::vector<NsPart> ns;      // free functions: enclosing namespaces
};

struct ClassModel {
  std::string usr;
  std::vector<NsPart> ns;      // namespaces around the (outermost) class
  std::string qualified;       // "::shop::OrderService"
  std::string ctor_name;       // "OrderService" (for `using X::X;`)
  std::string proxy_name;      // "OrderService_woven" / "Outer_Inner_woven" / "PaymentService_decorated"
  // An interface (abstract class): the proxy is a decorator that holds an
  // implementation and forwards every public virtual method to it.
  bool decorator = false;
  std::vector<FunctionModel> methods;
};

struct Model {
  std::string header;          // header path as given
  std::vector<ClassModel> classes;
  std::vector<FunctionModel> functions;
  std::vector<std::string> dependencies;  // every file the TU read
};

}  // namespace weavegen
