#include "clang_types.h"

#include <functional>

#include "clang_util.h"

namespace weavegen {

namespace {

CXType canonical(CXType t) { return clang_getCanonicalType(strip_ref(t)); }

CXCursor declaration(CXType t) { return clang_getTypeDeclaration(canonical(t)); }

// The template a record was instantiated from, or the record itself.
CXCursor template_or_self(CXCursor rec) {
  CXCursor t = clang_getSpecializedCursorTemplate(rec);
  return clang_Cursor_isNull(t) ? rec : t;
}

bool in_namespace_std(CXCursor c) {
  CXCursor p = clang_getCursorSemanticParent(c);
  while (clang_getCursorKind(p) == CXCursor_Namespace && clang_Cursor_isInlineNamespace(p))
    p = clang_getCursorSemanticParent(p);
  return clang_getCursorKind(p) == CXCursor_Namespace && spelling(p) == "std" &&
         clang_getCursorKind(clang_getCursorSemanticParent(p)) == CXCursor_TranslationUnit;
}

// "awaitable" for "coroutine_traits<awaitable<T>, Args...>".
std::string first_template_argument_name(const std::string& display) {
  auto open = display.find('<');
  if (open == std::string::npos) return "";
  auto end = display.find_first_of("<,>", open + 1);
  std::string n = display.substr(open + 1, end - open - 1);
  auto colons = n.rfind("::");
  if (colons != std::string::npos) n = n.substr(colons + 2);
  while (!n.empty() && n.back() == ' ') n.pop_back();
  return n;
}

}  // namespace

bool has_default_argument(CXCursor p) {
  bool found = false;
  visit(p, [&](CXCursor c) {
    if (clang_isExpression(clang_getCursorKind(c))) found = true;
    return found ? CXChildVisit_Break : CXChildVisit_Continue;
  });
  return found;
}

TypeId ClangTypes::id(CXType t) {
  if (t.kind == CXType_Invalid) return 0;
  types_.push_back(t);
  return static_cast<TypeId>(types_.size());
}

std::string ClangTypes::written(TypeId t) { return type_spelling(strip_ref(type(t))); }
std::string ClangTypes::name(TypeId t) { return unqual_spelling(canonical(type(t))); }

Passing ClangTypes::passing(TypeId t) {
  if (t == 0) return Passing::value;
  const CXType c = clang_getCanonicalType(type(t));
  if (c.kind == CXType_RValueReference) return Passing::rvalue_reference;
  if (c.kind != CXType_LValueReference) return Passing::value;
  return clang_isConstQualifiedType(clang_getPointeeType(c)) ? Passing::const_reference : Passing::reference;
}

bool ClangTypes::copyable(TypeId t) {
  if (t == 0) return true;
  CXType cur = canonical(type(t));
  if (cur.kind != CXType_Record) return true;
  CXCursor rec = clang_getTypeDeclaration(cur);
  if (clang_Cursor_isNull(rec)) return true;
  // The constructors the class declares (an implicit instantiation may not
  // have its members yet: then the template's).
  struct Seen {
    bool copy = false, copy_deleted = false, move = false;
  };
  Seen seen;
  auto visit = [](CXCursor child, CXCursor, CXClientData d) {
    auto* s = static_cast<Seen*>(d);
    if (clang_getCursorKind(child) != CXCursor_Constructor) return CXChildVisit_Continue;
    if (clang_CXXConstructor_isCopyConstructor(child)) {
      s->copy = true;
      if (clang_getCursorAvailability(child) == CXAvailability_NotAvailable) s->copy_deleted = true;  // = delete
    } else if (clang_CXXConstructor_isMoveConstructor(child)) {
      s->move = true;
    }
    return CXChildVisit_Continue;
  };
  clang_visitChildren(rec, visit, &seen);
  if (!seen.copy && !seen.move) {
    CXCursor tmpl = clang_getSpecializedCursorTemplate(rec);
    if (!clang_Cursor_isNull(tmpl)) {
      seen = Seen{};
      clang_visitChildren(tmpl, visit, &seen);
    }
  }
  return !seen.copy_deleted && !(seen.move && !seen.copy);
}

TypeShape ClangTypes::shape(TypeId t) {
  if (t == 0) return TypeShape::unknown;
  switch (canonical(type(t)).kind) {
    case CXType_Pointer: return TypeShape::pointer;
    case CXType_Record: return TypeShape::record;
    case CXType_Unexposed:
    case CXType_Invalid: return TypeShape::unknown;
    default: return TypeShape::other;
  }
}

ArrowTarget ClangTypes::arrow(TypeId t) {
  CXType cur = canonical(type(t));
  if (cur.kind == CXType_Pointer) return {ArrowTarget::ok, id(clang_getCanonicalType(clang_getPointeeType(cur)))};
  if (cur.kind != CXType_Record) return {ArrowTarget::not_pointer, 0};
  bool unsure = false;
  auto ops = find_members(clang_getTypeDeclaration(cur), "operator->", nullptr, &unsure);
  if (ops.empty()) return {unsure ? ArrowTarget::unknown : ArrowTarget::not_pointer, 0};
  CXType r = canonical(clang_getResultType(clang_getCursorType(ops.front())));
  if (r.kind != CXType_Pointer) return {ArrowTarget::unknown, 0};  // a smart pointer template
  return {ArrowTarget::ok, id(clang_getCanonicalType(clang_getPointeeType(r)))};
}

MemberLookup ClangTypes::members(TypeId record, const std::string& member) {
  MemberLookup out;
  std::set<std::string> all;
  auto found = find_members(declaration(type(record)), member, &all, &out.uncertain);
  out.all_names.assign(all.begin(), all.end());
  for (CXCursor c : found) {
    MemberInfo m;
    const CXCursorKind k = clang_getCursorKind(c);
    const bool method = k == CXCursor_CXXMethod || k == CXCursor_FunctionTemplate;
    m.kind = method ? MemberInfo::method : MemberInfo::field;
    switch (clang_getCXXAccessSpecifier(c)) {
      case CX_CXXProtected: m.access = MemberInfo::protected_; break;
      case CX_CXXPrivate: m.access = MemberInfo::private_; break;
      default: m.access = MemberInfo::public_; break;
    }
    if (k == CXCursor_CXXMethod) {
      m.is_const = clang_CXXMethod_isConst(c);
      m.callable_without_arguments = true;
      for (int i = 0, n = clang_Cursor_getNumArguments(c); i < n; ++i)
        if (!has_default_argument(clang_Cursor_getArgument(c, static_cast<unsigned>(i))))
          m.callable_without_arguments = false;
    }
    m.type = id(method ? clang_getResultType(clang_getCursorType(c)) : clang_getCursorType(c));
    out.found.push_back(m);
  }
  return out;
}

std::vector<CXCursor> ClangTypes::find_members(CXCursor record, const std::string& member, std::set<std::string>* all,
                                               bool* uncertain) {
  std::vector<CXCursor> out;
  std::function<void(CXCursor, int)> walk = [&](CXCursor rec, int depth) {
    if (depth > 16 || clang_Cursor_isNull(rec)) return;
    bool any = false;
    visit(rec, [&](CXCursor c) {
      any = true;
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_FieldDecl || k == CXCursor_CXXMethod || k == CXCursor_VarDecl ||
          k == CXCursor_FunctionTemplate) {
        std::string n = spelling(c);
        if (all) all->insert(n);
        if (n == member) out.push_back(c);
      } else if (k == CXCursor_CXXBaseSpecifier) {
        walk(declaration(clang_getCursorType(c)), depth + 1);
      }
      return CXChildVisit_Continue;
    });
    if (!any || out.empty()) {
      // Implicit template instantiations expose nothing; look at the template.
      CXCursor tmpl = clang_getSpecializedCursorTemplate(rec);
      if (!clang_Cursor_isNull(tmpl) && !clang_equalCursors(tmpl, rec)) {
        // Members of dependent bases are invisible here: the answer is a guess.
        if (uncertain) *uncertain = true;
        walk(tmpl, depth + 1);
      }
    }
  };
  walk(record, 0);
  return out;
}

void ClangTypes::index_free_functions() {
  indexed_ = true;
  std::function<void(CXCursor)> walk = [&](CXCursor parent) {
    visit(parent, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      const std::string n = spelling(c);
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_ClassDecl ||
          k == CXCursor_StructDecl || k == CXCursor_FriendDecl) {
        if (n == "coroutine_traits" && k != CXCursor_Namespace && in_namespace_std(c) &&
            !clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c)))
          coroutine_traits_.push_back(c);  // an explicit specialization
        walk(c);
      } else if (k == CXCursor_ClassTemplatePartialSpecialization) {
        if (n == "coroutine_traits" && in_namespace_std(c)) coroutine_traits_.push_back(c);
      } else if (k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) {
        int want = n == "weave_key" ? 0 : n == "operator<<" ? 1 : -1;
        if (want >= 0 && k == CXCursor_FunctionDecl && clang_Cursor_getNumArguments(c) == want + 1) {
          CXCursor d = declaration(clang_getCursorType(clang_Cursor_getArgument(c, want)));
          if (!clang_Cursor_isNull(d)) formattable_usrs_.insert(usr(d));
        }
        if (n == "operator co_await") {
          // A function template's parameters are not arguments of its cursor.
          visit(c, [&](CXCursor p) {
            if (clang_getCursorKind(p) == CXCursor_ParmDecl) {
              CXCursor d = declaration(clang_getCursorType(p));
              if (!clang_Cursor_isNull(d)) co_await_usrs_.insert(usr(template_or_self(d)));
              visit(p, [&](CXCursor r) {  // a dependent type names its template by a TemplateRef
                if (clang_getCursorKind(r) == CXCursor_TemplateRef)
                  co_await_usrs_.insert(usr(clang_getCursorReferenced(r)));
                return CXChildVisit_Continue;
              });
              return CXChildVisit_Break;
            }
            return CXChildVisit_Continue;
          });
        }
      }
      return CXChildVisit_Continue;
    });
  };
  walk(clang_getTranslationUnitCursor(tu_));
}

bool ClangTypes::formattable(TypeId id_) {
  CXType t = canonical(type(id_));
  if (t.kind >= CXType_Bool && t.kind <= CXType_LongDouble) return true;
  if (t.kind == CXType_Float128 || t.kind == CXType_Half || t.kind == CXType_Float16) return true;
  if (t.kind == CXType_Enum || t.kind == CXType_Pointer) return true;  // pointers: C strings, or streamed
  if (t.kind != CXType_Record) return t.kind != CXType_Void && t.kind != CXType_NullPtr;
  std::string sp = unqual_spelling(t);
  if (sp.rfind("std::basic_string<", 0) == 0 || sp.rfind("std::basic_string_view<", 0) == 0) return true;
  if (clang_Type_getNumTemplateArguments(t) > 0) return true;  // left to weave/key.h's static_assert
  if (!indexed_) index_free_functions();
  std::function<bool(CXCursor, int)> ok = [&](CXCursor rec, int depth) {
    if (clang_Cursor_isNull(rec) || depth > 16) return false;
    if (formattable_usrs_.count(usr(rec))) return true;
    bool found = false;
    visit(rec, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_ConversionFunction) found = true;  // e.g. operator std::string_view()
      if (k == CXCursor_CXXBaseSpecifier && ok(declaration(clang_getCursorType(c)), depth + 1)) found = true;
      return found ? CXChildVisit_Break : CXChildVisit_Continue;
    });
    return found;
  };
  return ok(clang_getTypeDeclaration(t), 0);
}

std::string ClangTypes::async_reason(CXType result) {
  CXType t = canonical(result);
  if (t.kind != CXType_Record) return "";
  const std::string s = type_spelling(t);
  if (s.rfind("std::future<", 0) == 0 || s.rfind("std::shared_future<", 0) == 0)
    return "a std::future is ready later";
  CXCursor decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl) || clang_isInvalid(clang_getCursorKind(decl))) return "";
  auto has = [&](const char* member) { return !find_members(decl, member, nullptr).empty(); };
  const std::string supported =
      "; Weave weaves methods returning boost::asio::awaitable<T> or asio::awaitable<T> as asynchronous";
  if (has("promise_type")) return "a coroutine type: it names a promise_type" + supported;
  bool nested_promise = false;  // `struct promise_type;` is a class, not a member find_members sees
  for (CXCursor c : {decl, template_or_self(decl)})
    visit(c, [&](CXCursor ch) {
      if (spelling(ch) == "promise_type") nested_promise = true;
      return nested_promise ? CXChildVisit_Break : CXChildVisit_Continue;
    });
  if (nested_promise) return "a coroutine type: it names a promise_type" + supported;
  if (!indexed_) index_free_functions();
  const CXCursor tmpl = template_or_self(decl);
  for (CXCursor spec : coroutine_traits_) {
    CXType st = clang_getCursorType(spec);
    if (clang_getCursorKind(spec) != CXCursor_ClassTemplatePartialSpecialization &&
        clang_Type_getNumTemplateArguments(st) > 0) {
      if (clang_equalTypes(clang_getCanonicalType(clang_Type_getTemplateArgumentAsType(st, 0)), t))
        return "a coroutine type: std::coroutine_traits is specialized for it" + supported;
    } else if (first_template_argument_name(str(clang_getCursorDisplayName(spec))) == spelling(tmpl)) {
      return "a coroutine type: std::coroutine_traits is specialized for it" + supported;
    }
  }
  if (has("await_ready") || has("operator co_await") || co_await_usrs_.count(usr(decl)) ||
      co_await_usrs_.count(usr(tmpl)))
    return "an awaitable: it has await_ready or operator co_await" + supported;
  if (has("then")) return "a future: it has a continuation, then()";
  if (has("get") && (has("wait") || has("wait_for"))) return "a future: it has get() and wait()";
  return "";
}

}  // namespace weavegen
