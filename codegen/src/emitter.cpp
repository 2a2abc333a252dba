#include "emitter.h"

#include "string_literal.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <variant>

#include <weave/generated/revision.h>

namespace weavegen {

namespace {

// An #include of `path` as written ("..." takes no escapes).
std::string include_line(const std::string& path) { return "#include \"" + path + "\"\n"; }

std::string open_ns(const std::vector<NsPart>& ns) {
  std::string r;
  for (const auto& p : ns) r += (p.is_inline ? "inline namespace " : "namespace ") + p.name + " {\n";
  return r;
}
std::string close_ns(const std::vector<NsPart>& ns) {
  std::string r;
  for (auto it = ns.rbegin(); it != ns.rend(); ++it) r += "}  // namespace " + it->name + "\n";
  return r;
}

std::string params_decl(const FunctionModel& f, bool with_defaults) {
  std::string r;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const auto& p = f.params[i];
    if (i) r += ", ";
    r += p.type;
    if (!p.type.empty() && p.type.back() != '&' && p.type.back() != '*') r += ' ';
    r += p.name;
    if (with_defaults && !p.default_text.empty()) r += " = " + p.default_text;
  }
  return r;
}

std::string call_args(const FunctionModel& f) {
  std::string r;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const auto& p = f.params[i];
    if (i) r += ", ";
    r += p.move ? "::std::move(" + p.name + ")" : p.name;
  }
  return r;
}

std::string qualifiers(const FunctionModel& f) {
  std::string r;
  if (f.is_const) r += " const";
  if (!f.ref_qualifier.empty()) r += " " + f.ref_qualifier;
  if (f.is_noexcept) r += " noexcept";
  return r;
}

std::string data_prefix(const FunctionModel& f) { return "weave_m" + std::to_string(f.id) + "_"; }

int line_count(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// A stored call's codec (weave/generated/stored_call.h): its encode and
// decode are members of the proxy (`proxy`), where the parameter types and
// the object's members are in scope.
void emit_stored_call_codec(std::string& out, const FunctionModel& f, const std::string& proxy) {
  const std::string p = data_prefix(f);
  const std::string id = std::to_string(f.id);
  out += "constexpr ::weave::StoredCallCodec " + p + "stored{\n";
  out += "    " + cpp_string_literal(f.signature) + ",\n";
  out += "    ::weave::signature_hash(" + cpp_string_literal(f.signature) + "),\n";
  out += "    /*annotation*/ " + std::to_string(f.stored_call_annotation) + ",\n";
  out += "    &" + proxy + "::weave_encode_m" + id + ",\n";
  out += "    [](void* weave_owner, ::std::string_view weave_json) -> ::std::unique_ptr<::weave::detail::DetachedCall> {\n";
  out += "      return static_cast<" + proxy + "*>(weave_owner)->weave_decode_m" + id + "(weave_json);\n";
  out += "    }};\n";
}

void emit_static_data(std::string& out, const FunctionModel& f, const std::string& header,
                      const std::string& proxy = "") {
  const std::string p = data_prefix(f);
  out += "// " + f.qualified_name + "\n";
  for (std::size_t i = 0; i < f.annotations.size(); ++i) {
    const auto& a = f.annotations[i];
    if (a.args.empty()) continue;
    out += "constexpr ::weave::ArgSpec " + p + "args" + std::to_string(i) + "[] = {\n";
    for (const auto& arg : a.args)
      out += "    {" + cpp_string_literal(arg.name) + ", " + arg_value_code(arg.value) + "},\n";
    out += "};\n";
  }
  out += "constexpr ::weave::AnnotationSpec " + p + "annotations[] = {\n";
  for (std::size_t i = 0; i < f.annotations.size(); ++i) {
    const auto& a = f.annotations[i];
    out += "    {" + cpp_string_literal(a.name) + ", /*order*/ " + std::to_string(a.order) + ", " +
           (a.args.empty() ? std::string("{}") : p + "args" + std::to_string(i)) + ", /*line*/ " +
           std::to_string(a.line) + ", /*column*/ " + std::to_string(a.col) + "},\n";
  }
  out += "};\n";
  if (!f.params.empty()) {
    out += "constexpr ::std::string_view " + p + "params[] = {";
    for (std::size_t i = 0; i < f.params.size(); ++i) out += (i ? ", " : "") + cpp_string_literal(f.params[i].name);
    out += "};\n";
  }
  // An annotation keeps the result (weave/result_codec.h); make_result_codec's
  // static_assert names what to add when the type has no JSON conversion.
  if (f.stores_result)
    out += "constexpr ::weave::ResultCodec " + p + "codec = ::weave::detail::make_result_codec<" + f.ret_qualified +
           ">(" + cpp_string_literal(f.async ? f.async_value : f.ret) + ");\n";
  if (f.stores_call) emit_stored_call_codec(out, f, proxy);
  std::string codecs;
  if (f.stores_result || f.stores_call) codecs += f.stores_result ? ", &" + p + "codec" : ", nullptr";
  if (f.stores_call) codecs += ", &" + p + "stored";
  out += "constexpr ::weave::MethodInfo " + p + "info{" + cpp_string_literal(f.qualified_name) + ", " + cpp_string_literal(header) + ", " +
         std::to_string(f.decl_line) + ", " + p + "annotations, " + (f.params.empty() ? "{}" : p + "params") +
         codecs + "};\n\n";
}

// Asynchronous methods: the source includes weave/generated/invoke_async.h
// (and with it Boost.Asio; only then).
bool any_async(const Model& m) {
  for (const auto& c : m.classes)
    for (const auto& f : c.methods)
      if (f.async && !f.annotations.empty()) return true;
  for (const auto& f : m.functions)
    if (f.async) return true;
  return false;
}

// Results or calls kept as JSON: the source includes weave/json_codec.h.
bool any_json(const Model& m) {
  for (const auto& c : m.classes)
    for (const auto& f : c.methods)
      if (f.stores_result || f.stores_call) return true;
  for (const auto& f : m.functions)
    if (f.stores_result) return true;
  return false;
}

bool class_stores_calls(const ClassModel& c) {
  return std::any_of(c.methods.begin(), c.methods.end(), [](const FunctionModel& f) { return f.stores_call; });
}

// How a member function reaches the real object: the base class of a
// Woven<T> proxy, or the implementation held by a decorator. A static method
// has no object: it is the base class's in both.
std::string member_call(const FunctionModel& f, bool decorator, const std::string& name) {
  if (decorator && !f.is_static)
    return (f.ref_qualifier == "&&" ? "::std::move(*weave_target_)." : "weave_target_->") + name;
  return (f.ref_qualifier == "&&" ? "::std::move(*this).weave_base::" : "weave_base::") + name;
}

// `auto name(params) qualifiers -> R`: a trailing return type may name the
// parameters (`-> decltype(id.size())`).
std::string declaration(const FunctionModel& f, const std::string& name, bool with_defaults) {
  return "auto " + name + "(" + params_decl(f, with_defaults) + ")" + qualifiers(f) + " -> " + f.ret;
}

// An annotation runs the call again later (FunctionModel::detaches, e.g.
// [[cache(refresh_after=...)]]): the proxy gives the runtime a way to re-make
// the call from copies of its arguments (weave::detail::detachable,
// Invocation::detach).
bool class_detaches(const ClassModel& c) {
  return std::any_of(c.methods.begin(), c.methods.end(), [](const FunctionModel& f) { return f.detaches; });
}

// `::weave::detail::detachable<R>(owner, [capture](auto& weave_c0, ...) -> R { call with the copies }, args...)`:
// the object is the proxy itself (its destructor waits for the copies), or
// for a decorator a shared owner of the implementation, kept by the copy.
std::string detachable(const FunctionModel& f, bool decorator) {
  std::string owner = "nullptr", capture;
  if (f.member && !f.is_static) {
    if (decorator) capture = "weave_target_ = weave_target_";
    else {
      owner = "this";
      capture = "this";
    }
  }
  std::string params, args, copies;
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const std::string c = "weave_c" + std::to_string(i);
    params += (i ? ", " : "") + std::string("auto& ") + c;
    args += (i ? ", " : "") + f.params[i].name;
    copies += (i ? ", " : "") + (f.params[i].move ? "::std::move(" + c + ")" : c);
  }
  const std::string call = (f.member ? member_call(f, decorator, f.name) : f.target) + "(" + copies + ")";
  return "::weave::detail::detachable<" + f.ret + ">(" + owner + ", [" + capture + "](" + params + ") -> " + f.ret +
         " { return " + call + "; }" + (args.empty() ? "" : ", " + args) + ")";
}

// `std::string weave_rendered[N]` filled from the key templates, each under a
// #line naming the annotation's line in the header (a compile error in a
// placeholder points there). Returns how to pass them as a span.
std::string emit_render(std::string& out, const FunctionModel& f, const std::string& header,
                        const std::string& source_path, bool decorator) {
  if (f.slots.empty()) return "::std::span<const ::std::string>{}";
  out += "  ::std::string weave_rendered[" + std::to_string(f.slots.size()) + "];\n";
  for (std::size_t i = 0; i < f.slots.size(); ++i) {
    const auto& s = f.slots[i];
    const std::string slot = "weave_rendered[" + std::to_string(i) + "]";
    out += "#line " + std::to_string(s.line) + " " + cpp_string_literal(header) + "\n";
    std::string stmt = " ";
    for (const auto& part : s.parts) {
      if (part.expr)
        stmt += std::string(s.names_state ? " ::weave::append_key(" : " ::weave::append_text(") + slot + ", " +
                key_access_code(part.access, decorator) + ");";
      else stmt += " " + slot + " += " + cpp_string_literal(part.text) + ";";
    }
    out += stmt + "\n";
    // The directive's own line is line_count+1; the next line gets +2.
    out += "#line " + std::to_string(line_count(out) + 2) + " " + cpp_string_literal(source_path) + "\n";
  }
  return "weave_rendered";
}

void emit_body(std::string& out, const FunctionModel& f, const std::string& header, const std::string& source_path,
               bool decorator) {
  const std::string p = data_prefix(f);
  out += "{\n";
  std::string args = "::std::span<const ::weave::ArgRef>{}";
  if (!f.params.empty()) {
    out += "  const ::weave::ArgRef weave_args[] = {";
    for (std::size_t i = 0; i < f.params.size(); ++i)
      out += (i ? ", " : "") + std::string("::weave::ArgRef(") + f.params[i].name + ")";
    out += "};\n";
    args = "weave_args";
  }
  const std::string rendered = emit_render(out, f, header, source_path, decorator);
  const std::string R = f.ret;
  std::string call;
  if (f.member) {
    call = member_call(f, decorator, f.name) + "(" + call_args(f) + ")";
  } else {
    call = f.target + "(" + call_args(f) + ")";
  }
  // What a skipped call returns: for an asynchronous method its task's value,
  // or the fallback's task.
  const std::string V = f.async ? f.async_value : R;
  std::string on_skip;
  switch (f.skip) {
    case FunctionModel::Skip::cannot: on_skip = "::weave::detail::CannotSkip{}"; break;
    case FunctionModel::Skip::nothing: on_skip = "[] {}"; break;
    case FunctionModel::Skip::nullopt: on_skip = "[]() -> " + V + " { return ::std::nullopt; }"; break;
    case FunctionModel::Skip::fallback: {
      std::string fb;
      if (f.member) fb = decorator ? member_call(f, true, f.fallback) : f.fallback;
      else fb = f.target.substr(0, f.target.rfind("::") + 2) + f.fallback;
      on_skip = (f.async ? "[&]() { return " : "[&]() -> " + R + " { return ") + fb + "(" + call_args(f) + "); }";
      break;
    }
  }
  if (f.async) {
    // The proxy is a coroutine: its parameters (by value) live in its frame
    // until the chain finished.
    out += "  co_return co_await ::weave::detail::invoke_async<" + R + ">(\n";
    out += "      ::" + p + "info, " + args + ", " + rendered + ",\n";
    out += "      [&]() -> " + R + " { return " + call + "; },\n";
    out += "      " + on_skip + ");\n";
    out += "}\n\n";
    return;
  }
  out += "  return ::weave::detail::invoke<" + R + ">(\n";
  out += "      ::" + p + "info, " + args + ", " + rendered + ",\n";
  out += "      [&]() -> " + R + " { return " + call + "; },\n";
  if (f.detaches) out += "      " + on_skip + ",\n      " + detachable(f, decorator) + ");\n";
  else out += "      " + on_skip + ");\n";
  out += "}\n\n";
}

// The parameter types without references and cv, as the proxy spells them.
std::string stored_types(const FunctionModel& f) {
  std::string r;
  for (std::size_t i = 0; i < f.params.size(); ++i)
    r += (i ? ", " : "") + std::string("::std::remove_cvref_t<") + f.params[i].type + ">";
  return r;
}

// The proxy's members behind a StoredCallCodec: encode the call's
// arguments; decode them into copies, render the key templates from them,
// and re-make the call on this object (detachable, as a background reload).
void emit_stored_call_members(std::string& out, const FunctionModel& f, const std::string& proxy,
                              const std::string& header, const std::string& source_path, bool decorator) {
  const std::string id = std::to_string(f.id);
  out += "::std::string " + proxy + "::weave_encode_m" + id + "(::std::span<const ::weave::ArgRef> weave_args) {\n";
  out += "  return ::weave::detail::encode_stored_args<" + stored_types(f) + ">(weave_args);\n}\n\n";
  out += "::std::unique_ptr<::weave::detail::DetachedCall> " + proxy + "::weave_decode_m" + id +
         "(::std::string_view weave_json) {\n";
  const std::string decoded = "::weave::detail::decode_stored_args<" + stored_types(f) + ">(weave_json)";
  if (f.params.empty()) {
    out += "  (void)" + decoded + ";\n";
  } else {
    out += "  auto weave_copies = " + decoded + ";\n  auto& [";
    for (std::size_t i = 0; i < f.params.size(); ++i) out += (i ? ", " : "") + f.params[i].name;
    out += "] = weave_copies;\n";
  }
  const std::string rendered = emit_render(out, f, header, source_path, decorator);
  out += "  return ::weave::detail::detached_copy(" + detachable(f, decorator) + ", " + rendered + ");\n}\n\n";
}

// `weave_stored_methods()`: the MethodInfo of every method whose calls are stored.
void emit_stored_methods(std::string& out, const ClassModel& c) {
  out += "::std::span<const ::weave::MethodInfo* const> " + c.proxy_name + "::weave_stored_methods() noexcept {\n";
  out += "  static constexpr const ::weave::MethodInfo* weave_methods[] = {";
  bool first = true;
  for (const auto& f : c.methods)
    if (f.stores_call) {
      out += (first ? "" : ", ") + std::string("&::") + data_prefix(f) + "info";
      first = false;
    }
  out += "};\n  return weave_methods;\n}\n\n";
}

// In the proxy class: what a worker finds the stored-call methods by
// (weave::stored_calls_of) and the members their codecs call.
std::string stored_call_declarations(const ClassModel& c) {
  if (!class_stores_calls(c)) return "";
  std::string out = "  // Calls kept to run later (weave/generated/stored_call.h).\n";
  out += "  using weave_proxy = " + c.proxy_name + ";\n";
  out += "  static ::std::span<const ::weave::MethodInfo* const> weave_stored_methods() noexcept;\n";
  for (const auto& f : c.methods) {
    if (!f.stores_call) continue;
    const std::string id = std::to_string(f.id);
    out += "  static ::std::string weave_encode_m" + id + "(::std::span<const ::weave::ArgRef> weave_args);\n";
    out += "  ::std::unique_ptr<::weave::detail::DetachedCall> weave_decode_m" + id +
           "(::std::string_view weave_json);\n";
  }
  return out;
}

std::string proxy_qualified(const ClassModel& c) {
  std::string q;
  for (const auto& n : c.ns) q += "::" + n.name;
  return q + "::" + c.proxy_name;
}

// An interface's decorator: holds an implementation, runs the chain around
// the annotated methods and forwards every other public virtual method.
void emit_decorator(std::string& out, const ClassModel& c) {
  const std::string ptr = "::std::shared_ptr<" + c.qualified + ">";
  out += open_ns(c.ns);
  out += "\nclass " + c.proxy_name + " final : public " + c.qualified + " {\n";
  out += " public:\n";
  out += "  using weave_base = " + c.qualified + ";\n";
  out += "  explicit " + c.proxy_name + "(" + ptr + " weave_target) : weave_target_(::std::move(weave_target)) {}\n";
  std::set<std::string> used;
  for (const auto& f : c.methods) {
    if (f.is_static) {
      // Hidden, as in a Woven<T> proxy: woven when called as Decorated<I>::f.
      if (used.insert(f.name).second) out += "  using weave_base::" + f.name + ";\n";
      out += "  static " + declaration(f, f.name, true) + ";\n";
      continue;
    }
    out += "  " + declaration(f, f.name, !f.annotations.empty()) + " override";
    if (f.annotations.empty()) out += " { return " + member_call(f, true, f.name) + "(" + call_args(f) + "); }";
    else out += ";";
    out += "\n";
  }
  out += stored_call_declarations(c);
  out += "\n private:\n  " + ptr + " weave_target_;\n};\n\n";
  out += close_ns(c.ns);
  out += "\ntemplate <>\nstruct weave::decorator_traits<" + c.qualified + "> {\n";
  out += "  using type = " + proxy_qualified(c) + ";\n};\n\n";
}

}  // namespace

std::string arg_value_code(const ArgValue& v) {
  const std::string of = "::weave::ArgValue::of_";
  struct Code {
    const std::string& of;
    std::string operator()(const arg::Forever&) const { return of + "forever()"; }
    std::string operator()(const arg::DurationMs& d) const { return of + "duration_ms(" + std::to_string(d.ms) + ")"; }
    std::string operator()(const arg::Integer& i) const { return of + "integer(" + std::to_string(i.value) + ")"; }
    std::string operator()(const arg::Bool& b) const { return of + "bool(" + (b.value ? "true" : "false") + ")"; }
    std::string operator()(const arg::Text& t) const { return of + "text(" + cpp_string_literal(t.text) + ")"; }
    std::string operator()(const arg::Enum& e) const {
      return of + "enum(" + cpp_string_literal(e.text) + ", " + std::to_string(e.index) + ")";
    }
    std::string operator()(const arg::Template& t) const {
      return of + "template(" + std::to_string(t.slot) + ", " + cpp_string_literal(t.source) + ")";
    }
    std::string operator()(const arg::Rate& r) const {
      return of + "rate(" + std::to_string(r.permits) + ", " + std::to_string(r.per_ms) + ")";
    }
    std::string operator()(const arg::ExceptionTypes& e) const {
      std::string types;
      for (const std::string& t : e.types) types += (types.empty() ? "" : ", ") + t;
      return of + "exception_types(&::weave::error_is<" + types + ">, " + cpp_string_literal(e.written) + ")";
    }
    std::string operator()(const arg::TemplateList& l) const {
      return of + "template_list(" + std::to_string(l.first) + ", " + std::to_string(l.n) + ", " +
             cpp_string_literal(l.sources) + ")";
    }
  };
  return std::visit(Code{of}, v);
}

std::string key_access_code(const KeyAccess& a, bool decorator) {
  std::string code = !a.self ? a.param : decorator ? "(*weave_target_)" : "(*this)";
  for (const auto& s : a.steps) code += (s.arrow ? "->" : ".") + s.member + (s.call ? "()" : "");
  return code;
}

std::string emit_header(const Model& m, const EmitOptions& o) {
  std::string out;
  out += "// Generated by weavegen from " + o.display_path + "; do not edit.\n";
  out += "#pragma once\n\n";
  std::string inc = o.include_as;
  // The annotations are weavegen's: no file including this one needs a flag for them.
  out += "#if defined(__clang__)\n#pragma clang diagnostic push\n"
         "#pragma clang diagnostic ignored \"-Wunknown-attributes\"\n"
         "#elif defined(__GNUC__)\n#pragma GCC diagnostic push\n"
         "#pragma GCC diagnostic ignored \"-Wattributes\"\n#endif\n";
  out += inc.size() > 1 && inc.front() == '<' ? "#include " + inc + "\n" : include_line(inc);
  out += "#if defined(__clang__)\n#pragma clang diagnostic pop\n"
         "#elif defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n";
  out += "#include <weave/generated.h>\n\n";
  // This file calls the runtime the way revision N says: a library of another
  // revision refuses it at compile time, naming both (weave/generated/revision.h).
  out += "WEAVE_CHECK_GENERATED_REVISION(" + std::to_string(WEAVE_GENERATED_REVISION) + ");\n\n";
  for (const auto& c : m.classes) {
    if (c.decorator) {
      emit_decorator(out, c);
      continue;
    }
    out += open_ns(c.ns);
    out += "\nclass " + c.proxy_name + " : public " + c.qualified + " {\n";
    out += " public:\n";
    out += "  using weave_base = " + c.qualified + ";\n";
    out += "  using " + c.qualified + "::" + c.ctor_name + ";\n";
    if (class_detaches(c) || class_stores_calls(c)) {
      // Background reloads and stored calls run on this object: its
      // destructor waits for them (and refuses new ones) before the base is
      // destroyed. Declaring it
      // would drop the implicit moves, so the special members are spelled out;
      // each is deleted when the base's is (a class holding a mutex is not
      // copyable), which clang would warn about in the user's build.
      const std::string& p = c.proxy_name;
      out += "#if defined(__clang__)\n#pragma clang diagnostic push\n"
             "#pragma clang diagnostic ignored \"-Wdefaulted-function-deleted\"\n#endif\n";
      out += "  " + p + "() = default;\n";
      out += "  " + p + "(const " + p + "&) = default;\n";
      out += "  " + p + "(" + p + "&&) = default;\n";
      out += "  " + p + "& operator=(const " + p + "&) = default;\n";
      out += "  " + p + "& operator=(" + p + "&&) = default;\n";
      out += "#if defined(__clang__)\n#pragma clang diagnostic pop\n#endif\n";
      out += "  ~" + p + "() { ::weave::detail::retire_detached(this); }\n";
    }
    // One using-declaration per name, in the public section when any
    // annotated overload of it is public (a using has one access).
    std::set<std::string> used;
    for (int prot = 0; prot < 2; ++prot) {
      std::string section;
      for (const auto& f : c.methods) {
        if (f.is_protected != (prot == 1)) continue;
        if (used.insert(f.name).second) section += "  using weave_base::" + f.name + ";\n";
        section += "  " + std::string(f.is_static ? "static " : "") + declaration(f, f.name, true) +
                   (f.is_virtual ? " override" : "") + ";\n";
      }
      if (section.empty()) continue;
      if (prot) out += "\n protected:\n";
      out += section;
    }
    if (class_stores_calls(c)) out += "\n public:\n" + stored_call_declarations(c);
    out += "};\n\n";
    out += close_ns(c.ns);
    out += "\ntemplate <>\nstruct weave::woven_traits<" + c.qualified + "> {\n";
    out += "  using type = " + proxy_qualified(c) + ";\n};\n\n";
  }
  for (const auto& f : m.functions) {
    out += open_ns(f.ns) + "namespace woven {\n";
    out += declaration(f, f.name, true) + ";\n";
    out += "}  // namespace woven\n" + close_ns(f.ns) + "\n";
  }
  return out;
}

std::string emit_source(const Model& m, const EmitOptions& o) {
  std::string out;
  out += "// Generated by weavegen from " + o.display_path + "; do not edit.\n";
  out += include_line(o.header_from_source) + "\n";
  out += "#include <optional>\n#include <span>\n#include <string>\n#include <string_view>\n#include <utility>\n\n";
  if (any_json(m)) out += "#include <weave/json_codec.h>\n\n";
  if (any_async(m))
    // GCC 12 takes a coroutine frame's field of a lambda's type for a subobject
    // without linkage (a false positive of -Wsubobject-linkage, on by default).
    out += "#if defined(__GNUC__) && !defined(__clang__)\n"
           "#pragma GCC diagnostic ignored \"-Wsubobject-linkage\"\n"
           "#endif\n"
           "#include <weave/generated/invoke_async.h>\n\n";
  out += "namespace {\n\n";
  for (const auto& c : m.classes)
    for (const auto& f : c.methods)
      if (!f.annotations.empty()) emit_static_data(out, f, o.display_path, proxy_qualified(c));
  for (const auto& f : m.functions) emit_static_data(out, f, o.display_path);
  out += "}  // namespace\n\n";
  for (const auto& c : m.classes) {
    out += open_ns(c.ns) + "\n";
    for (const auto& f : c.methods) {
      if (f.annotations.empty()) continue;  // a decorator's forwarder, defined in the header
      out += declaration(f, c.proxy_name + "::" + f.name, false) + "\n";
      emit_body(out, f, o.display_path, o.source_path, c.decorator);
      if (f.stores_call) emit_stored_call_members(out, f, c.proxy_name, o.display_path, o.source_path, c.decorator);
    }
    if (class_stores_calls(c)) emit_stored_methods(out, c);
    out += close_ns(c.ns) + "\n";
  }
  for (const auto& f : m.functions) {
    out += open_ns(f.ns) + "namespace woven {\n\n";
    out += declaration(f, f.name, false) + "\n";
    emit_body(out, f, o.display_path, o.source_path, false);
    out += "}  // namespace woven\n" + close_ns(f.ns) + "\n";
  }
  return out;
}

}  // namespace weavegen
