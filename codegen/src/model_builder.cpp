#include "model_builder.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "clang_util.h"
#include "validator.h"

namespace weavegen {

namespace {

bool has_final_attr(CXCursor c) {
  bool found = false;
  visit(c, [&](CXCursor ch) {
    if (clang_getCursorKind(ch) == CXCursor_CXXFinalAttr) found = true;
    return found ? CXChildVisit_Break : CXChildVisit_Continue;
  });
  return found;
}

bool really_noexcept(CXType fn_type) {
  // The canonical type has noexcept(<constant>) folded: noexcept(false) is none.
  switch (clang_getExceptionSpecificationType(clang_getCanonicalType(fn_type))) {
    case CXCursor_ExceptionSpecificationKind_BasicNoexcept:
    case CXCursor_ExceptionSpecificationKind_DynamicNone:
    case CXCursor_ExceptionSpecificationKind_NoThrow: return true;
    default: return false;
  }
}

// Identifies a method across a class and its bases (overriders share it).
std::string signature_key(CXCursor m) {
  return spelling(m) + "|" + type_spelling(clang_getCanonicalType(clang_getCursorType(m)));
}

CXCursor base_class(CXCursor specifier) {
  return clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(specifier)));
}

// What a stored call's signature hash is taken over: the qualified name and
// the parameter types after aliases ("void shop::Orders::cancel(const
// std::basic_string<char>&)"), spelled by libclang alike for every compiler
// that later builds the proxy.
std::string stored_call_signature(CXCursor fn, const std::string& qualified_name) {
  auto tight = [](std::string s) {
    for (const char* gap : {" &", " *"})
      for (std::size_t at; (at = s.find(gap)) != std::string::npos;) s.erase(at, 1);
    return s;
  };
  std::string sig = tight(type_spelling(clang_getCanonicalType(clang_getResultType(clang_getCursorType(fn))))) + " " +
                    qualified_name + "(";
  for (int i = 0, n = clang_Cursor_getNumArguments(fn); i < n; ++i)
    sig += (i ? ", " : "") + tight(type_spelling(clang_getCanonicalType(
                                 clang_getCursorType(clang_Cursor_getArgument(fn, static_cast<unsigned>(i))))));
  return sig + ")";
}

}  // namespace

// Why `c` cannot be woven ("" when it can).
std::string ModelBuilder::unsupported(CXCursor c, const DeclEntry& d) {
  CXCursorKind k = clang_getCursorKind(c);
  switch (k) {
    case CXCursor_Constructor: return "cannot weave a constructor";
    case CXCursor_Destructor: return "cannot weave a destructor";
    case CXCursor_FieldDecl:
    case CXCursor_VarDecl: return "cannot weave a variable; annotations go on functions and methods";
    case CXCursor_ClassDecl:
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_ClassTemplate:
    case CXCursor_ClassTemplatePartialSpecialization:
      return "cannot weave a class; annotate its methods instead";
    case CXCursor_FunctionTemplate: return "cannot weave a function template";
    case CXCursor_ConversionFunction: return "cannot weave an operator";
    case CXCursor_FriendDecl: return "cannot weave a friend declaration";
    case CXCursor_CXXMethod:
    case CXCursor_FunctionDecl: break;
    default: return "annotations can only be placed on functions and methods";
  }
  std::string name = spelling(c);
  if (name.rfind("operator", 0) == 0 && name.size() > 8 && !std::isalnum(static_cast<unsigned char>(name[8])) &&
      name[8] != '_')
    return "cannot weave an operator";
  for (CXCursor p = clang_getCursorSemanticParent(c);
       !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
       p = clang_getCursorSemanticParent(p)) {
    CXCursorKind pk = clang_getCursorKind(p);
    if (pk == CXCursor_ClassTemplate || pk == CXCursor_ClassTemplatePartialSpecialization)
      return "cannot weave a method of a class template";
  }
  // `= delete`: the extent ends with the `delete` keyword.
  auto last = src_.token_at(d.end);
  if (last != src_.tokens.begin() && (last - 1)->text == "delete" && last - 1 != src_.tokens.begin() &&
      (last - 2)->text == "=")
    return "cannot weave a deleted function";
  if (clang_Cursor_isVariadic(c)) return "cannot weave a C variadic function";
  if (k == CXCursor_CXXMethod) {
    CXCursor cls = clang_getCursorSemanticParent(c);
    const bool interface = clang_CXXRecord_isAbstract(cls);
    // A static method of an interface is called on no object, so no decorator
    // stands in its way: its decorator hides it like Woven<T> hides a class's
    // (weave::Decorated<I>::f(...)).
    const bool is_static = clang_CXXMethod_isStatic(c);
    if (clang_getCXXAccessSpecifier(c) == CX_CXXPrivate)
      return interface && !is_static
                 ? "cannot weave a private method (the decorator cannot call it on the implementation)"
                 : "cannot weave a private method (the proxy class cannot call it)";
    if (interface && clang_getCXXAccessSpecifier(c) == CX_CXXProtected)
      return is_static ? "cannot weave a protected static method of interface '" + spelling(cls) +
                             "' (its decorator is final: nothing could call the woven one)"
                       : "cannot weave a protected method of interface '" + spelling(cls) +
                             "' (the decorator cannot call it on the implementation)";
    if (interface && !is_static && !clang_CXXMethod_isVirtual(c))
      return "'" + name + "' is not virtual: calls through interface '" + spelling(cls) +
             "' never reach its decorator; make it virtual, or annotate the implementation's method";
    if (has_final_attr(c)) return "cannot weave a final method (the proxy would override it)";
    for (CXCursor p = cls; is_class_kind(clang_getCursorKind(p)); p = clang_getCursorSemanticParent(p)) {
      if (has_final_attr(p) && clang_equalCursors(p, cls))
        return "cannot weave a method of final class '" + spelling(cls) + "' (the proxy derives from it)";
      if (spelling(p).empty() || clang_Cursor_isAnonymous(p)) return "cannot weave a method of an anonymous class";
      if ((!clang_equalCursors(p, cls) || is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(p)))) &&
          clang_getCXXAccessSpecifier(p) != CX_CXXPublic &&
          is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(p))))
        return "cannot weave a method of non-public nested class '" + spelling(p) + "'";
    }
  }
  return "";
}

// Namespaces enclosing `c` (outermost first), stopping at classes.
bool ModelBuilder::namespaces_of(CXCursor c, std::vector<NsPart>& ns, std::string& qualified, std::string& readable,
                                 Loc at) {
  std::vector<CXCursor> chain;
  for (CXCursor p = clang_getCursorSemanticParent(c);
       !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
       p = clang_getCursorSemanticParent(p))
    chain.push_back(p);
  std::reverse(chain.begin(), chain.end());
  qualified.clear();
  readable.clear();
  for (CXCursor p : chain) {
    std::string n = spelling(p);
    if (clang_getCursorKind(p) == CXCursor_Namespace) {
      if (n.empty() || clang_Cursor_isAnonymous(p)) {
        rep_.error(src_.path, at,
                   "cannot weave a declaration inside an anonymous namespace (the proxy is defined in "
                   "another translation unit)");
        return false;
      }
      bool inl = clang_Cursor_isInlineNamespace(p);
      ns.push_back({n, inl});
      qualified += "::" + n;
      if (!inl) readable += n + "::";
    } else if (is_class_kind(clang_getCursorKind(p))) {
      qualified += "::" + n;
      readable += n + "::";
    } else if (clang_getCursorKind(p) == CXCursor_LinkageSpec) {
      continue;
    } else {
      rep_.error(src_.path, at, "cannot weave a declaration in this scope");
      return false;
    }
  }
  return true;
}

// Why interface `cls` cannot have a decorator ("" when it can).
std::string ModelBuilder::cannot_decorate(CXCursor cls) {
  const std::string name = spelling(cls);
  bool any_ctor = false, default_ctor = false;
  visit(cls, [&](CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_Constructor) return CXChildVisit_Continue;
    any_ctor = true;
    bool all_default = clang_getCXXAccessSpecifier(c) != CX_CXXPrivate;
    for (int i = 0, n = clang_Cursor_getNumArguments(c); i < n && all_default; ++i)
      all_default = has_default_argument(clang_Cursor_getArgument(c, static_cast<unsigned>(i)));
    default_ctor |= all_default;
    return CXChildVisit_Continue;
  });
  if (any_ctor && !default_ctor)
    return "cannot decorate interface '" + name + "': it has no default constructor (its decorator derives from it)";
  std::string hidden;
  std::function<void(CXCursor, int)> walk = [&](CXCursor rec, int depth) {
    if (depth > 16 || clang_Cursor_isNull(rec) || !hidden.empty()) return;
    visit(rec, [&](CXCursor c) {
      const CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_CXXMethod && clang_CXXMethod_isPureVirtual(c) &&
          clang_getCXXAccessSpecifier(c) != CX_CXXPublic && hidden.empty())
        hidden = spelling(c);
      if (k == CXCursor_CXXBaseSpecifier) walk(base_class(c), depth + 1);
      return CXChildVisit_Continue;
    });
  };
  walk(cls, 0);
  if (!hidden.empty())
    return "cannot decorate interface '" + name + "': its pure virtual method '" + hidden +
           "' is not public, so the decorator cannot call it on the implementation";
  return "";
}

ClassModel* ModelBuilder::class_for(CXCursor cls, Loc at) {
  const std::string id = usr(cls);
  auto it = class_index_.find(id);
  if (it != class_index_.end()) return &model_.classes[it->second];
  ClassModel m;
  m.usr = id;
  m.decorator = clang_CXXRecord_isAbstract(cls);
  if (m.decorator) {
    std::string why = cannot_decorate(cls);
    if (!why.empty()) {
      rep_.error(src_.path, at, why);
      return nullptr;
    }
  }
  // Namespaces of the outermost enclosing class.
  CXCursor outer = cls;
  while (is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(outer))))
    outer = clang_getCursorSemanticParent(outer);
  std::vector<NsPart> ns;
  std::string qualified, readable;
  if (!namespaces_of(outer, ns, qualified, readable, at)) return nullptr;
  m.ns = ns;
  if (!namespaces_of(cls, ns, qualified, readable, at)) return nullptr;
  m.ctor_name = spelling(cls);
  m.qualified = qualified + "::" + m.ctor_name;
  // Proxy name: Outer_Inner_woven (or _decorated).
  std::string chain;
  for (CXCursor p = cls; is_class_kind(clang_getCursorKind(p)); p = clang_getCursorSemanticParent(p))
    chain = spelling(p) + (chain.empty() ? "" : "_" + chain);
  m.proxy_name = chain + (m.decorator ? "_decorated" : "_woven");
  model_.classes.push_back(std::move(m));
  class_index_[id] = model_.classes.size() - 1;
  class_cursor_[id] = cls;
  return &model_.classes.back();
}

bool ModelBuilder::is_overloaded(CXCursor fn) {
  CXCursor parent = clang_getCursorSemanticParent(fn);
  std::string name = spelling(fn);
  int n = 0;
  if (is_class_kind(clang_getCursorKind(parent))) {
    visit(parent, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      if ((k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate) && spelling(c) == name) ++n;
      return CXChildVisit_Continue;
    });
  } else {
    for (const auto& d : decls_) {
      CXCursorKind k = clang_getCursorKind(d.cursor);
      if ((k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) && spelling(d.cursor) == name &&
          clang_equalCursors(clang_getCursorSemanticParent(d.cursor), parent) &&
          !clang_equalCursors(clang_getCanonicalCursor(d.cursor), clang_getCanonicalCursor(fn)))
        ++n;
    }
    ++n;
  }
  return n > 1;
}

bool ModelBuilder::has_function(CXCursor fn, const std::string& name) {
  CXCursor parent = clang_getCursorSemanticParent(fn);
  if (is_class_kind(clang_getCursorKind(parent))) return !types_.find_members(parent, name, nullptr).empty();
  bool found = false;
  const std::string parent_usr = usr(parent);
  std::function<void(CXCursor)> walk = [&](CXCursor p) {
    visit(p, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec) walk(c);
      else if ((k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) && spelling(c) == name &&
               usr(clang_getCursorSemanticParent(c)) == parent_usr)
        found = true;
      return found ? CXChildVisit_Break : CXChildVisit_Continue;
    });
  };
  walk(clang_getTranslationUnitCursor(tu_));
  return found;
}

std::string ModelBuilder::resolve_type(CXCursor fn, const std::string& name) {
  if (!type_names_read_) {
    type_names_read_ = true;
    std::function<void(CXCursor)> walk = [&](CXCursor p) {
      visit(p, [&](CXCursor c) {
        const CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec) {
          walk(c);
        } else if (k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
                   k == CXCursor_EnumDecl || k == CXCursor_TypedefDecl || k == CXCursor_TypeAliasDecl) {
          if (std::string q = fully_qualified(c); !q.empty()) type_names_.insert(std::move(q));
          if (k != CXCursor_TypedefDecl && k != CXCursor_TypeAliasDecl && k != CXCursor_EnumDecl) walk(c);
        }
        return CXChildVisit_Continue;
      });
    };
    walk(clang_getTranslationUnitCursor(tu_));
  }
  if (name.rfind("::", 0) == 0) return type_names_.count(name) ? name : "";
  for (CXCursor s = clang_getCursorSemanticParent(fn); !clang_Cursor_isNull(s); s = clang_getCursorSemanticParent(s)) {
    const CXCursorKind k = clang_getCursorKind(s);
    const std::string scope = k == CXCursor_TranslationUnit ? "" : fully_qualified(s);
    if (k != CXCursor_TranslationUnit && scope.empty()) continue;  // (an unnamed scope)
    const std::string candidate = scope + "::" + name;
    if (type_names_.count(candidate)) return candidate;
    if (k == CXCursor_TranslationUnit) break;
  }
  return "";
}

std::string ModelBuilder::qualified_text(std::vector<Token>::const_iterator from, unsigned end) const {
  std::string out;
  unsigned at = from == src_.tokens.end() ? end : from->offset;
  CXFile file = clang_getFile(tu_, src_.path.c_str());
  for (auto it = from; it != src_.tokens.end() && it->offset < end; ++it) {
    if (it->kind != Token::ident) continue;
    if (it != src_.tokens.begin()) {
      const std::string& before = std::prev(it)->text;
      if (before == "::" || before == "." || before == "->") continue;
    }
    CXCursor ref = clang_getCursorReferenced(clang_getCursor(tu_, clang_getLocationForOffset(tu_, file, it->offset)));
    if (clang_Cursor_isNull(ref) || clang_isInvalid(clang_getCursorKind(ref)) || spelling(ref) != it->text) continue;
    const std::string q = fully_qualified(ref);
    if (q.empty()) continue;
    out += src_.slice(at, it->offset) + q;
    at = it->offset + static_cast<unsigned>(it->text.size());
  }
  return out + src_.slice(at, end);
}

// An Asio awaitable<T> with the default executor, Boost.Asio's or standalone
// Asio's (whichever the user's Weave is built on: weave/asio.h): the task
// type Weave weaves as asynchronous (weave/async_task.h); `value` becomes T.
ModelBuilder::Awaitable ModelBuilder::asio_awaitable(CXType t, CXType& value) {
  const CXType canon = clang_getCanonicalType(t);
  if (canon.kind != CXType_Record) return Awaitable::no;
  const std::string spelled = type_spelling(canon);
  std::string asio;  // "boost::asio::" or "asio::"
  for (const char* ns : {"boost::asio::", "asio::"})
    if (spelled.rfind(std::string(ns) + "awaitable<", 0) == 0) asio = ns;
  if (asio.empty() || clang_Type_getNumTemplateArguments(canon) != 2) return Awaitable::no;
  const CXType executor = clang_getCanonicalType(clang_Type_getTemplateArgumentAsType(canon, 1));
  if (type_spelling(executor) != asio + "any_io_executor") return Awaitable::other_executor;
  value = clang_Type_getTemplateArgumentAsType(canon, 0);
  return Awaitable::yes;
}

// An asynchronous method's coroutine may run on after its caller's arguments
// are gone: it takes each one by value. Reports the others; false if any.
bool ModelBuilder::async_parameters_owned(const FunctionModel& f, const FunctionFacts& facts, Loc at) {
  bool ok = true;
  for (std::size_t i = 0; i < f.params.size() && i < facts.param_types.size(); ++i) {
    const TypeId t = facts.param_types[i];
    const std::string name = types_.name(t);
    std::string what;
    switch (types_.passing(t)) {
      case Passing::reference:
      case Passing::const_reference:
      case Passing::rvalue_reference: what = "a reference"; break;
      default:
        if (types_.shape(t) == TypeShape::pointer) what = "a pointer";
        else if (name.rfind("std::basic_string_view<", 0) == 0 || name.rfind("std::span<", 0) == 0) what = "a view";
    }
    if (what.empty()) continue;
    rep_.error(src_.path, at,
               "'" + f.qualified_name + "' is asynchronous (it returns '" + f.ret +
                   "'): its coroutine may run after the caller's arguments are gone, but parameter '" +
                   f.params[i].name + "' is '" + f.params[i].type + "', " + what +
                   "; take it by value (std::string, not std::string_view or const std::string&)");
    ok = false;
  }
  return ok;
}

// Return type, parameters (with defaults as written, if asked) and qualifiers
// of `c`. `nested`: spell types fully qualified (the proxy lives outside the
// class). A decorator's forwarders need no defaults: calls go through the
// interface, whose declaration has them.
bool ModelBuilder::read_signature(CXCursor c, bool nested, bool with_defaults, FunctionModel& f, Loc at) {
  auto type_text = [&](CXType t) {
    std::string s = nested ? type_spelling(clang_getCanonicalType(t)) : type_spelling(t);
    if (s.find('(') != std::string::npos && s.rfind("decltype(", 0) != 0) s = "::std::type_identity_t<" + s + ">";
    else if (s.find('[') != std::string::npos) s = "::std::type_identity_t<" + s + ">";
    return s;
  };
  const CXType fty = clang_getCursorType(c);
  const CXType rty = clang_getResultType(fty);
  f.ret = type_text(rty);
  // An asynchronous method: what follows about the result is about its task's value.
  CXType vty = rty;
  bool ok = true;
  switch (asio_awaitable(rty, vty)) {
    case Awaitable::no: break;
    case Awaitable::yes:
      f.async = true;
      f.async_value = type_text(vty);
      break;
    case Awaitable::other_executor:
      rep_.error(src_.path, at,
                 "'" + f.qualified_name + "' returns '" + type_spelling(rty) +
                     "', an awaitable on another executor: Weave weaves boost::asio::awaitable<T> and "
                     "asio::awaitable<T> with the default executor (any_io_executor)");
      ok = false;
      break;
  }
  f.ret_void = vty.kind == CXType_Void;
  {
    std::string q = type_spelling(clang_getCanonicalType(vty));
    if (q.find('(') != std::string::npos || q.find('[') != std::string::npos) q = "::std::type_identity_t<" + q + ">";
    f.ret_qualified = q;
  }
  const bool member = clang_getCursorKind(c) == CXCursor_CXXMethod;
  f.is_static = member && clang_CXXMethod_isStatic(c);
  f.is_const = member && clang_CXXMethod_isConst(c);
  f.is_virtual = member && clang_CXXMethod_isVirtual(c);
  f.is_protected = member && clang_getCXXAccessSpecifier(c) == CX_CXXProtected;
  f.is_noexcept = really_noexcept(fty);
  auto rq = clang_Type_getCXXRefQualifier(fty);
  f.ref_qualifier = rq == CXRefQualifier_LValue ? "&" : rq == CXRefQualifier_RValue ? "&&" : "";
  const int n_args = clang_Cursor_getNumArguments(c);
  std::set<std::string> used_names;
  for (int i = 0; i < n_args; ++i) used_names.insert(spelling(clang_Cursor_getArgument(c, static_cast<unsigned>(i))));
  for (int i = 0; i < n_args; ++i) {
    CXCursor p = clang_Cursor_getArgument(c, static_cast<unsigned>(i));
    ParamModel pm;
    pm.name = spelling(p);
    if (pm.name.empty()) {
      pm.name = "arg" + std::to_string(i);
      if (used_names.count(pm.name)) pm.name = "weave_arg" + std::to_string(i);
    }
    CXType pt = clang_getCursorType(p);
    pm.type = type_text(pt);
    CXType canon = clang_getCanonicalType(pt);
    pm.rvalue_ref = pt.kind == CXType_RValueReference || canon.kind == CXType_RValueReference;
    pm.move = pm.rvalue_ref || canon.kind == CXType_Record;
    if (with_defaults && has_default_argument(p)) {
      // The text after the parameter's top-level '=', as written.
      CXSourceRange r = clang_getCursorExtent(p);
      const bool written = !from_macro(clang_getRangeStart(r)) && !from_macro(clang_getCursorLocation(p));
      unsigned pb = file_offset(clang_getRangeStart(r)), pe = file_offset(clang_getRangeEnd(r));
      unsigned from = spelling(p).empty() ? pb : file_offset(clang_getCursorLocation(p));
      int depth = 0;
      for (auto it = src_.token_at(from); written && it != src_.tokens.end() && it->offset < pe; ++it) {
        if (it->kind != Token::punct) continue;
        if (it->text == "(" || it->text == "[" || it->text == "{") ++depth;
        else if (it->text == ")" || it->text == "]" || it->text == "}") --depth;
        else if (it->text == "=" && depth == 0) {
          std::string t = nested ? qualified_text(it + 1, pe) : src_.slice(it->offset + 1, pe);
          auto b = t.find_first_not_of(" \t\r\n"), e = t.find_last_not_of(" \t\r\n");
          pm.default_text = b == std::string::npos ? "" : t.substr(b, e - b + 1);
          break;
        }
      }
      if (pm.default_text.empty()) {
        rep_.error(src_.path, at,
                   "the default argument of parameter '" + pm.name + "' of '" + f.qualified_name +
                       "' comes from a macro expansion, which weavegen cannot copy into the proxy; declare '" +
                       f.name + "' without the macro, or without the default");
        ok = false;
      }
    }
    f.params.push_back(std::move(pm));
  }
  // Skip behaviour by return type (an asynchronous method's: by its value's).
  const std::string canon_ret = type_spelling(clang_getCanonicalType(vty));
  if (f.ret_void) f.skip = FunctionModel::Skip::nothing;
  else if (canon_ret.rfind("std::optional<", 0) == 0) f.skip = FunctionModel::Skip::nullopt;
  return ok;
}

void ModelBuilder::add(const DeclEntry& d, const std::vector<const RawAnnotation*>& anns) {
  // Annotations with syntax errors were already reported (empty name).
  const RawAnnotation* first = nullptr;
  for (auto* a : anns)
    if (!a->name.empty()) {
      first = a;
      break;
    }
  if (!first) return;
  CXCursor c = d.cursor;
  std::string why = unsupported(c, d);
  if (const MacroUse* m = src_.macro_at(d.begin); m && !why.empty())
    why += " (the declaration comes from macro '" + m->name + "')";
  if (!why.empty()) {
    rep_.error(src_.path, first->loc, why, static_cast<int>(first->spelled.size()));
    return;
  }
  const bool member = clang_getCursorKind(c) == CXCursor_CXXMethod;
  FunctionModel f;
  f.id = next_id_++;
  f.member = member;
  f.name = spelling(c);
  f.decl_line = file_loc(clang_getCursorLocation(c)).line;
  std::string qualified, readable;
  std::vector<NsPart> ns;
  if (!namespaces_of(c, ns, qualified, readable, first->loc)) return;
  f.qualified_name = readable + f.name;
  ClassModel* cls = nullptr;
  CXCursor parent = clang_getCursorSemanticParent(c);
  bool nested = false;
  if (member) {
    cls = class_for(parent, first->loc);
    if (!cls) return;
    nested = is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(parent)));
  } else {
    f.ns = ns;
    f.target = qualified + "::" + f.name;
  }
  if (!read_signature(c, nested, /*with_defaults=*/true, f, first->loc)) return;

  FunctionFacts facts;
  for (int i = 0, n = clang_Cursor_getNumArguments(c); i < n; ++i)
    facts.param_types.push_back(types_.id(clang_getCursorType(clang_Cursor_getArgument(c, static_cast<unsigned>(i)))));
  facts.member = member;
  facts.is_static = f.is_static;
  if (member) {
    facts.self = types_.id(clang_getCursorType(parent));
    facts.protected_visible = !cls->decorator;
  }
  facts.default_key = f.qualified_name;
  if (is_overloaded(c)) {
    std::string list;
    for (int i = 0, n = clang_Cursor_getNumArguments(c); i < n; ++i)
      list += (i ? ", " : "") + type_spelling(clang_getCursorType(clang_Cursor_getArgument(c, static_cast<unsigned>(i))));
    facts.default_key += "(" + list + ")";
  }
  facts.async = f.async;
  if (!f.async) facts.async_reason = types_.async_reason(clang_getResultType(clang_getCursorType(c)));
  else if (!async_parameters_owned(f, facts, first->loc)) return;
  {
    const CXTypeKind rk = clang_getCanonicalType(clang_getResultType(clang_getCursorType(c))).kind;
    facts.returns_reference = rk == CXType_LValueReference || rk == CXType_RValueReference;
  }
  facts.is_noexcept = f.is_noexcept;
  facts.has_function = [&](const std::string& name) { return has_function(c, name); };
  facts.resolve_type = [&](const std::string& name) { return resolve_type(c, name); };

  bool ok = true;
  std::vector<AnnotationModel> list;
  std::string fallback;
  for (auto* a : anns) {
    if (a->name.empty()) {
      ok = false;
      continue;
    }
    ValidatedAnnotation va;
    if (!validate_annotation(*a, *vocab_.find(a->name), facts, types_, f, rep_, src_.path, va)) ok = false;
    if (!va.fallback.empty()) {
      if (!fallback.empty() && fallback != va.fallback) {
        rep_.error(src_.path, va.fallback_loc,
                   "conflicting fallbacks '" + fallback + "' and '" + va.fallback + "' on one method",
                   static_cast<int>(va.fallback.size()));
        ok = false;
      }
      fallback = va.fallback;
    }
    // An annotation that runs the method again (retry) needs each run to
    // get the caller's arguments: by-value ones are copied to the target,
    // never moved, and an rvalue reference, whose object a run may have
    // moved from, is refused.
    if (vocab_.find(a->name)->reruns) {
      for (std::size_t i = 0; i < f.params.size(); ++i) {
        ParamModel& pm = f.params[i];
        const bool copyable = i >= facts.param_types.size() || types_.copyable(facts.param_types[i]);
        if (pm.rvalue_ref || (pm.move && !copyable)) {
          rep_.error(src_.path, a->loc,
                     "'" + a->name + "' runs the method again, but its parameter '" + pm.name + "' (" + pm.type +
                         (pm.rvalue_ref ? ") is an rvalue reference a run may move from"
                                        : ") cannot be copied to each run") +
                         "; take it by const reference",
                     static_cast<int>(a->name.size()));
          ok = false;
        }
        pm.move = false;
      }
    }
    list.push_back(std::move(va.model));
  }
  if (!ok) return;
  if (!fallback.empty()) {
    f.skip = FunctionModel::Skip::fallback;
    f.fallback = fallback;
  }
  std::stable_sort(list.begin(), list.end(),
                   [](const AnnotationModel& a, const AnnotationModel& b) { return a.order < b.order; });
  // An order that cannot work (a retry inside its own timeout): the
  // vocabulary says which, and why.
  for (std::size_t inner = 0; inner < list.size(); ++inner) {
    const AnnotationDef* def = vocab_.find(list[inner].name);
    if (!def) continue;
    for (std::size_t outer = 0; outer < inner; ++outer) {
      const auto why = def->warn_inside.find(list[outer].name);
      if (why == def->warn_inside.end()) continue;
      rep_.warning(src_.path, Loc{list[inner].line, list[inner].col},
                   "'" + list[inner].name + "' (order " + std::to_string(list[inner].order) + ") runs inside '" +
                       list[outer].name + "' (order " + std::to_string(list[outer].order) + "): " + why->second,
                   static_cast<int>(list[inner].name.size()));
    }
  }
  f.annotations = std::move(list);
  if (f.stores_call) {
    for (std::size_t i = 0; i < f.annotations.size(); ++i)
      if (f.annotations[i].stores_call) f.stored_call_annotation = static_cast<int>(i);
    f.signature = stored_call_signature(c, f.qualified_name);
  }
  if (member && cls->decorator && !f.is_static) annotated_[cls->usr].insert(signature_key(c));
  if (member) cls->methods.push_back(std::move(f));
  else model_.functions.push_back(std::move(f));
}

// A decorator overrides every public virtual method of its interface (and of
// the interface's bases) that is not annotated with a plain forwarder.
void ModelBuilder::add_forwarders(ClassModel& cls, CXCursor cursor) {
  std::set<std::string> seen = annotated_[cls.usr];
  std::function<void(CXCursor, int, bool)> walk = [&](CXCursor rec, int depth, bool own) {
    if (depth > 16 || clang_Cursor_isNull(rec)) return;
    std::vector<CXCursor> bases;
    visit(rec, [&](CXCursor c) {
      const CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_CXXBaseSpecifier) bases.push_back(base_class(c));
      if (k != CXCursor_CXXMethod || !clang_CXXMethod_isVirtual(c)) return CXChildVisit_Continue;
      if (!seen.insert(signature_key(c)).second) return CXChildVisit_Continue;  // overridden lower down
      if (clang_getCXXAccessSpecifier(c) != CX_CXXPublic || has_final_attr(c)) return CXChildVisit_Continue;
      FunctionModel f;
      f.id = next_id_++;
      f.member = true;
      f.name = spelling(c);
      f.qualified_name = cls.qualified.substr(2) + "::" + f.name;
      f.decl_line = file_loc(clang_getCursorLocation(c)).line;
      // Inherited methods are spelled fully qualified: their class may live elsewhere.
      read_signature(c, /*nested=*/!own, /*with_defaults=*/false, f, {});
      cls.methods.push_back(std::move(f));
      return CXChildVisit_Continue;
    });
    for (CXCursor b : bases) walk(b, depth + 1, false);
  };
  walk(cursor, 0, true);
}

// The proxy unhides a method name's other overloads with one
// `using weave_base::name;`, which has one access: when annotated overloads of
// a name are public and protected, it goes in the public section (the emitter
// writes it once), and the base's protected overloads of that name become
// public on the proxy type.
void ModelBuilder::warn_mixed_access() {
  for (const auto& cls : model_.classes) {
    std::set<std::string> public_names;
    for (const auto& m : cls.methods)
      if (!m.is_protected) public_names.insert(m.name);
    for (const auto& m : cls.methods)
      if (m.is_protected && public_names.count(m.name) && !m.annotations.empty())
        rep_.warning(src_.path, Loc{m.annotations.front().line, m.annotations.front().col},
                     "'" + m.name + "' has public and protected annotated overloads: the proxy's one "
                     "'using' for '" + m.name + "' is public, so the base's protected overloads of '" + m.name +
                     "' are public on " + cls.proxy_name,
                     static_cast<int>(m.annotations.front().name.size()));
  }
}

void ModelBuilder::finish() {
  for (auto& cls : model_.classes)
    if (cls.decorator) add_forwarders(cls, class_cursor_.at(cls.usr));
  warn_mixed_access();
}

}  // namespace weavegen
