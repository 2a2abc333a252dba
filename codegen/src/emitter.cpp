#include "emitter.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace weavegen {

namespace {

std::string quote(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

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
  if (!f.noexcept_text.empty()) r += " " + f.noexcept_text;
  return r;
}

std::string data_prefix(const FunctionModel& f) { return "weave_m" + std::to_string(f.id) + "_"; }

int line_count(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void emit_static_data(std::string& out, const FunctionModel& f, const std::string& header) {
  const std::string p = data_prefix(f);
  out += "// " + f.qualified_name + "\n";
  for (std::size_t i = 0; i < f.annotations.size(); ++i) {
    const auto& a = f.annotations[i];
    if (a.args.empty()) continue;
    out += "constexpr ::weave::ArgSpec " + p + "args" + std::to_string(i) + "[] = {\n";
    for (const auto& arg : a.args) out += "    {" + quote(arg.name) + ", " + arg.value_code + "},\n";
    out += "};\n";
  }
  out += "constexpr ::weave::AnnotationSpec " + p + "annotations[] = {\n";
  for (std::size_t i = 0; i < f.annotations.size(); ++i) {
    const auto& a = f.annotations[i];
    out += "    {" + quote(a.name) + ", /*order*/ " + std::to_string(a.order) + ", " +
           (a.args.empty() ? std::string("{}") : p + "args" + std::to_string(i)) + ", /*line*/ " +
           std::to_string(a.line) + ", /*column*/ " + std::to_string(a.col) + "},\n";
  }
  out += "};\n";
  if (!f.params.empty()) {
    out += "constexpr ::std::string_view " + p + "params[] = {";
    for (std::size_t i = 0; i < f.params.size(); ++i) out += (i ? ", " : "") + quote(f.params[i].name);
    out += "};\n";
  }
  out += "constexpr ::weave::MethodInfo " + p + "info{" + quote(f.qualified_name) + ", " + quote(header) + ", " +
         std::to_string(f.decl_line) + ", " + p + "annotations, " + (f.params.empty() ? "{}" : p + "params") +
         "};\n\n";
}

void emit_body(std::string& out, const FunctionModel& f, const std::string& header, const std::string& source_path) {
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
  std::string rendered = "::std::span<const ::std::string>{}";
  if (!f.slots.empty()) {
    out += "  ::std::string weave_rendered[" + std::to_string(f.slots.size()) + "];\n";
    rendered = "weave_rendered";
    for (std::size_t i = 0; i < f.slots.size(); ++i) {
      const auto& s = f.slots[i];
      const std::string slot = "weave_rendered[" + std::to_string(i) + "]";
      out += "#line " + std::to_string(s.line) + " " + quote(header) + "\n";
      std::string stmt = " ";
      for (const auto& part : s.parts) {
        if (part.expr) stmt += " ::weave::append_key(" + slot + ", " + part.text + ");";
        else stmt += " " + slot + " += " + quote(part.text) + ";";
      }
      out += stmt + "\n";
      // The directive's own line is line_count+1; the next line gets +2.
      out += "#line " + std::to_string(line_count(out) + 2) + " " + quote(source_path) + "\n";
    }
  }
  const std::string R = f.ret;
  std::string call;
  if (f.member) {
    call = (f.ref_qualifier == "&&" ? "::std::move(*this).weave_base::" : "weave_base::") + f.name + "(" +
           call_args(f) + ")";
  } else {
    call = f.target + "(" + call_args(f) + ")";
  }
  std::string on_skip;
  switch (f.skip) {
    case FunctionModel::Skip::cannot: on_skip = "::weave::detail::CannotSkip{}"; break;
    case FunctionModel::Skip::nothing: on_skip = "[] {}"; break;
    case FunctionModel::Skip::nullopt: on_skip = "[]() -> " + R + " { return ::std::nullopt; }"; break;
    case FunctionModel::Skip::fallback: {
      std::string fb;
      if (f.member) fb = f.fallback;
      else fb = f.target.substr(0, f.target.rfind("::") + 2) + f.fallback;
      on_skip = "[&]() -> " + R + " { return " + fb + "(" + call_args(f) + "); }";
      break;
    }
  }
  out += "  return ::weave::detail::invoke<" + R + ">(\n";
  out += "      ::" + p + "info, " + args + ", " + rendered + ",\n";
  out += "      [&]() -> " + R + " { return " + call + "; },\n";
  out += "      " + on_skip + ");\n";
  out += "}\n\n";
}

}  // namespace

std::string emit_header(const Model& m, const EmitOptions& o) {
  std::string out;
  out += "// Generated by weavegen from " + m.header + "; do not edit.\n";
  out += "#pragma once\n\n";
  std::string inc = o.include_as;
  out += "#include " + (inc.size() > 1 && inc.front() == '<' ? inc : quote(inc)) + "\n";
  out += "#include <weave/generated.h>\n\n";
  for (const auto& c : m.classes) {
    out += open_ns(c.ns);
    out += "\nclass " + c.proxy_name + " : public " + c.qualified + " {\n";
    out += " public:\n";
    out += "  using weave_base = " + c.qualified + ";\n";
    out += "  using " + c.qualified + "::" + c.ctor_name + ";\n";
    // One using-declaration per name, in the public section when any
    // annotated overload of it is public (a using has one access).
    std::set<std::string> used;
    for (int prot = 0; prot < 2; ++prot) {
      std::string section;
      for (const auto& f : c.methods) {
        if (f.is_protected != (prot == 1)) continue;
        if (used.insert(f.name).second) section += "  using weave_base::" + f.name + ";\n";
        section += "  " + std::string(f.is_static ? "static " : "") + f.ret + " " + f.name + "(" +
                   params_decl(f, true) + ")" + qualifiers(f) + (f.is_virtual ? " override" : "") + ";\n";
      }
      if (section.empty()) continue;
      if (prot) out += "\n protected:\n";
      out += section;
    }
    out += "};\n\n";
    out += close_ns(c.ns);
    out += "\ntemplate <>\nstruct weave::woven_traits<" + c.qualified + "> {\n";
    std::string proxy_q;
    for (const auto& n : c.ns) proxy_q += "::" + n.name;
    out += "  using type = " + proxy_q + "::" + c.proxy_name + ";\n};\n\n";
  }
  for (const auto& f : m.functions) {
    out += open_ns(f.ns) + "namespace woven {\n";
    out += f.ret + " " + f.name + "(" + params_decl(f, true) + ")" + qualifiers(f) + ";\n";
    out += "}  // namespace woven\n" + close_ns(f.ns) + "\n";
  }
  return out;
}

std::string emit_source(const Model& m, const EmitOptions& o) {
  std::string out;
  out += "// Generated by weavegen from " + m.header + "; do not edit.\n";
  out += "#include " + quote(o.header_from_source) + "\n\n";
  out += "#include <optional>\n#include <span>\n#include <string>\n#include <string_view>\n#include <utility>\n\n";
  out += "namespace {\n\n";
  for (const auto& c : m.classes)
    for (const auto& f : c.methods) emit_static_data(out, f, m.header);
  for (const auto& f : m.functions) emit_static_data(out, f, m.header);
  out += "}  // namespace\n\n";
  for (const auto& c : m.classes) {
    out += open_ns(c.ns) + "\n";
    for (const auto& f : c.methods) {
      out += "auto " + c.proxy_name + "::" + f.name + "(" + params_decl(f, false) + ")" + qualifiers(f) + " -> " +
             f.ret + "\n";
      emit_body(out, f, m.header, o.source_path);
    }
    out += close_ns(c.ns) + "\n";
  }
  for (const auto& f : m.functions) {
    out += open_ns(f.ns) + "namespace woven {\n\n";
    out += "auto " + f.name + "(" + params_decl(f, false) + ")" + qualifiers(f) + " -> " + f.ret + "\n";
    emit_body(out, f, m.header, o.source_path);
    out += "}  // namespace woven\n" + close_ns(f.ns) + "\n";
  }
  return out;
}

}  // namespace weavegen
