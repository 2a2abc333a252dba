#include "scanner.h"

#include <clang-c/Index.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "attributes.h"
#include "key_template.h"

namespace fs = std::filesystem;

namespace weavegen {

namespace {

std::string str(CXString s) {
  const char* c = clang_getCString(s);
  std::string r = c ? c : "";
  clang_disposeString(s);
  return r;
}

std::string spelling(CXCursor c) { return str(clang_getCursorSpelling(c)); }
std::string type_spelling(CXType t) { return str(clang_getTypeSpelling(t)); }
// Spelling without top-level const/volatile.
std::string unqual_spelling(CXType t) {
  std::string s = type_spelling(t);
  for (bool again = true; again;) {
    again = false;
    for (const char* q : {"const ", "volatile "})
      if (s.rfind(q, 0) == 0) {
        s.erase(0, std::strlen(q));
        again = true;
      }
  }
  return s;
}

void visit(CXCursor parent, const std::function<CXChildVisitResult(CXCursor)>& f) {
  clang_visitChildren(
      parent,
      [](CXCursor c, CXCursor, CXClientData d) {
        return (*static_cast<const std::function<CXChildVisitResult(CXCursor)>*>(d))(c);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// A result that may still be computed after the call returns: std::future,
// std::shared_future, or a coroutine return type (it names a promise_type).
bool is_async_result(CXType t) {
  t = clang_getCanonicalType(t);
  const std::string s = type_spelling(t);
  if (s.rfind("std::future<", 0) == 0 || s.rfind("std::shared_future<", 0) == 0) return true;
  auto names_promise = [](CXCursor decl) {
    bool found = false;
    visit(decl, [&](CXCursor c) {
      if (spelling(c) == "promise_type") found = true;
      return found ? CXChildVisit_Break : CXChildVisit_Continue;
    });
    return found;
  };
  CXCursor decl = clang_getTypeDeclaration(t);
  if (clang_Cursor_isNull(decl) || clang_isInvalid(clang_getCursorKind(decl))) return false;
  if (names_promise(decl)) return true;
  // A specialization nobody instantiated yet: look in its template.
  CXCursor tmpl = clang_getSpecializedCursorTemplate(decl);
  return !clang_Cursor_isNull(tmpl) && names_promise(tmpl);
}

// "::ns::Outer::name" for a declaration at namespace or class scope; "" for
// one inside a function (nothing to qualify).
std::string fully_qualified(CXCursor d) {
  std::string q = spelling(d);
  for (CXCursor p = clang_getCursorSemanticParent(d); !clang_Cursor_isNull(p); p = clang_getCursorSemanticParent(p)) {
    const CXCursorKind k = clang_getCursorKind(p);
    if (k == CXCursor_TranslationUnit) return "::" + q;
    if (k != CXCursor_Namespace && k != CXCursor_ClassDecl && k != CXCursor_StructDecl &&
        k != CXCursor_UnionDecl && k != CXCursor_EnumDecl && k != CXCursor_ClassTemplate)
      return "";
    const std::string name = spelling(p);
    if (name.empty()) return "";  // anonymous: cannot be named
    if (!clang_Cursor_isInlineNamespace(p)) q = name + "::" + q;
  }
  return "";
}

unsigned offset_of(CXSourceLocation l) {
  unsigned off = 0;
  clang_getSpellingLocation(l, nullptr, nullptr, nullptr, &off);
  return off;
}
Loc loc_of(CXSourceLocation l) {
  unsigned line = 0, col = 0;
  clang_getSpellingLocation(l, nullptr, &line, &col, nullptr);
  return {static_cast<int>(line), static_cast<int>(col)};
}

bool is_class_kind(CXCursorKind k) {
  return k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

// Strips references (not cv).
CXType strip_ref(CXType t) {
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) return clang_getPointeeType(t);
  return t;
}

struct DeclEntry {
  CXCursor cursor;
  unsigned begin, end, name;  // offsets
};

struct Target {
  std::size_t decl = 0;
  std::vector<const RawAnnotation*> annotations;
};

class Scanner {
 public:
  Scanner(const ScanOptions& o, const Vocabulary& v, Reporter& r, Model& m)
      : opt_(o), vocab_(v), rep_(r), model_(m) {}
  ~Scanner() {
    if (tu_) clang_disposeTranslationUnit(tu_);
    if (index_) clang_disposeIndex(index_);
  }

  bool run();

 private:
  bool parse();
  void tokenize();
  void collect_decls(CXCursor parent);
  void warn_mixed_access();
  void attach(const std::vector<RawAnnotation>& anns);
  bool only_attributes_between(unsigned from, unsigned to) const;
  void process(const DeclEntry& d, const std::vector<const RawAnnotation*>& anns);
  std::string unsupported(CXCursor c, const DeclEntry& d);
  bool namespaces_of(CXCursor c, std::vector<NsPart>& ns, std::string& qualified, std::string& readable,
                     Loc at);
  ClassModel* class_for(CXCursor cls, Loc at);
  bool annotation(const RawAnnotation& raw, CXCursor fn, FunctionModel& f, AnnotationModel& out,
                  std::string& fallback_name, Loc& fallback_loc);
  bool key_template(const RawValue& v, CXCursor fn, FunctionModel& f, int line_hint, KeyRender& out);
  bool placeholder(const KeyPiece& p, CXCursor fn, const FunctionModel& f,
                   const std::function<void(int, int, const std::string&)>& err, std::string& expr);
  bool formattable(CXType t);
  void build_format_index();
  std::vector<CXCursor> find_members(CXCursor record, const std::string& name, std::set<std::string>* all,
                                     bool* uncertain = nullptr);
  bool is_overloaded(CXCursor fn);
  bool fallback_exists(CXCursor fn, const std::string& name);
  std::string text(unsigned b, unsigned e) const { return source_.substr(b, e - b); }
  // The source from token `from` up to offset `end`, every unqualified name
  // replaced by its fully qualified one: a nested class's proxy lives at
  // namespace scope, where the enclosing class's names are not visible.
  std::string qualified_text(std::vector<Token>::const_iterator from, unsigned end) const {
    std::string out;
    unsigned at = from == tokens_.end() ? end : from->offset;
    for (auto it = from; it != tokens_.end() && it->offset < end; ++it) {
      if (it->kind != Token::ident) continue;
      if (it != tokens_.begin()) {
        const std::string& before = std::prev(it)->text;
        if (before == "::" || before == "." || before == "->") continue;
      }
      CXCursor ref = clang_getCursorReferenced(clang_getCursor(tu_, clang_getLocationForOffset(tu_, file_, it->offset)));
      if (clang_Cursor_isNull(ref) || clang_isInvalid(clang_getCursorKind(ref)) || spelling(ref) != it->text) continue;
      const std::string q = fully_qualified(ref);
      if (q.empty()) continue;
      out += text(at, it->offset) + q;
      at = it->offset + static_cast<unsigned>(it->text.size());
    }
    return out + text(at, end);
  }

  const ScanOptions& opt_;
  const Vocabulary& vocab_;
  Reporter& rep_;
  Model& model_;
  CXIndex index_ = nullptr;
  CXTranslationUnit tu_ = nullptr;
  CXFile file_ = nullptr;
  std::string source_;
  std::vector<Token> tokens_;
  std::vector<DeclEntry> decls_;
  std::map<std::size_t, Target> targets_;
  std::map<std::string, std::size_t> class_index_;  // usr -> classes index
  bool format_index_built_ = false;
  std::set<std::string> formattable_usrs_;
  int next_id_ = 0;
};

bool Scanner::run() {
  if (!parse()) return false;
  tokenize();
  auto anns = scan_attributes(tokens_, vocab_, rep_, opt_.header);
  collect_decls(clang_getTranslationUnitCursor(tu_));
  std::sort(decls_.begin(), decls_.end(), [](const DeclEntry& a, const DeclEntry& b) { return a.begin < b.begin; });
  attach(anns);
  for (auto& [idx, t] : targets_) process(decls_[idx], t.annotations);
  warn_mixed_access();
  return rep_.errors() == 0;
}

// The proxy unhides a method name's other overloads with one
// `using weave_base::name;`, which has one access: when annotated overloads of
// a name are public and protected, it goes in the public section (the emitter
// writes it once), and the base's protected overloads of that name become
// public on the proxy type.
void Scanner::warn_mixed_access() {
  for (const auto& cls : model_.classes) {
    std::set<std::string> public_names;
    for (const auto& m : cls.methods)
      if (!m.is_protected) public_names.insert(m.name);
    for (const auto& m : cls.methods)
      if (m.is_protected && public_names.count(m.name) && !m.annotations.empty())
        rep_.warning(opt_.header, Loc{m.annotations.front().line, m.annotations.front().col},
                     "'" + m.name + "' has public and protected annotated overloads: the proxy's one "
                     "'using' for '" + m.name + "' is public, so the base's protected overloads of '" + m.name +
                     "' are public on " + cls.proxy_name,
                     static_cast<int>(m.annotations.front().name.size()));
  }
}

bool Scanner::parse() {
  index_ = clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0);
  std::vector<std::string> args = {"-xc++", "-std=c++20"};
  for (const auto& a : opt_.clang_args) args.push_back(a);
  // weavegen reports unknown attributes itself.
  args.push_back("-Wno-unknown-attributes");
  args.push_back("-Wno-ignored-attributes");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  CXErrorCode ec = clang_parseTranslationUnit2(index_, opt_.header.c_str(), argv.data(),
                                               static_cast<int>(argv.size()), nullptr, 0,
                                               CXTranslationUnit_None, &tu_);
  if (ec != CXError_Success || !tu_) {
    rep_.error("cannot parse '" + opt_.header + "' (libclang error " + std::to_string(ec) +
               "; check the clang arguments after --)");
    return false;
  }
  bool failed = false;
  for (unsigned i = 0, n = clang_getNumDiagnostics(tu_); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu_, i);
    CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error) {
      failed = true;
      CXFile f;
      unsigned line, col;
      clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &line, &col, nullptr);
      std::string msg = str(clang_getDiagnosticSpelling(d));
      if (f) {
        std::string path = str(clang_getFileName(f));
        if (clang_File_isEqual(f, clang_getFile(tu_, opt_.header.c_str()))) path = opt_.header;
        rep_.error(path, {static_cast<int>(line), static_cast<int>(col)}, msg);
      } else {
        rep_.error(msg);
      }
    }
    clang_disposeDiagnostic(d);
  }
  if (failed) return false;
  file_ = clang_getFile(tu_, opt_.header.c_str());
  if (!file_) {
    rep_.error("cannot find '" + opt_.header + "' in its own translation unit");
    return false;
  }
  size_t size = 0;
  const char* data = clang_getFileContents(tu_, file_, &size);
  source_.assign(data ? data : "", data ? size : 0);
  rep_.add_source(opt_.header, source_);

  // Dependencies: every file the TU included, plus the header itself.
  std::set<std::string> deps;
  clang_getInclusions(
      tu_,
      [](CXFile f, CXSourceLocation*, unsigned, CXClientData d) {
        std::string name = str(clang_getFileName(f));
        if (!name.empty())
          static_cast<std::set<std::string>*>(d)->insert(fs::weakly_canonical(name).string());
      },
      &deps);
  deps.insert(fs::absolute(opt_.header).lexically_normal().string());
  model_.dependencies.assign(deps.begin(), deps.end());
  return true;
}

void Scanner::tokenize() {
  CXSourceRange all = clang_getRange(clang_getLocationForOffset(tu_, file_, 0),
                                     clang_getLocationForOffset(tu_, file_, static_cast<unsigned>(source_.size())));
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu_, all, &toks, &n);
  for (unsigned i = 0; i < n; ++i) {
    CXTokenKind k = clang_getTokenKind(toks[i]);
    if (k == CXToken_Comment) continue;
    Token t;
    t.kind = k == CXToken_Punctuation ? Token::punct
             : k == CXToken_Keyword   ? Token::keyword
             : k == CXToken_Identifier ? Token::ident
                                       : Token::literal;
    t.text = str(clang_getTokenSpelling(tu_, toks[i]));
    CXSourceLocation l = clang_getTokenLocation(tu_, toks[i]);
    t.offset = offset_of(l);
    t.loc = loc_of(l);
    tokens_.push_back(std::move(t));
  }
  clang_disposeTokens(tu_, toks, n);
}

void Scanner::collect_decls(CXCursor parent) {
  visit(parent, [&](CXCursor c) {
    CXCursorKind k = clang_getCursorKind(c);
    if (!clang_Location_isFromMainFile(clang_getCursorLocation(c))) return CXChildVisit_Continue;
    if (!clang_isDeclaration(k) || k == CXCursor_CXXAccessSpecifier) return CXChildVisit_Continue;
    CXSourceRange r = clang_getCursorExtent(c);
    decls_.push_back({c, offset_of(clang_getRangeStart(r)), offset_of(clang_getRangeEnd(r)),
                      offset_of(clang_getCursorLocation(c))});
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || is_class_kind(k)) collect_decls(c);
    return CXChildVisit_Continue;
  });
}

// True when [from, to) holds only whitespace, comments and attribute-specifiers.
bool Scanner::only_attributes_between(unsigned from, unsigned to) const {
  auto it = std::lower_bound(tokens_.begin(), tokens_.end(), from,
                             [](const Token& t, unsigned off) { return t.offset < off; });
  int depth = 0;  // inside [[ ... ]]
  for (; it != tokens_.end() && it->offset < to; ++it) {
    if (depth == 0) {
      if (it->text == "[" && it + 1 != tokens_.end() && (it + 1)->text == "[") {
        depth = 2;
        ++it;
        continue;
      }
      if (it->text == "alignas") continue;
      return false;
    }
    if (it->kind == Token::punct) {
      if (it->text == "[" || it->text == "(" || it->text == "{") ++depth;
      if (it->text == "]" || it->text == ")" || it->text == "}") --depth;
    }
  }
  return true;
}

void Scanner::attach(const std::vector<RawAnnotation>& anns) {
  for (const auto& a : anns) {
    std::optional<std::size_t> pick;
    // 1. A declaration whose extent encloses the attribute and whose name
    //    follows it (`template <...> [[lock]] void f()`, `class [[lock]] C`).
    for (std::size_t i = 0; i < decls_.size(); ++i) {
      const auto& d = decls_[i];
      if (d.begin < a.spec_begin && d.end >= a.spec_end && d.name >= a.spec_end)
        if (!pick || decls_[*pick].begin <= d.begin) pick = i;
    }
    // 2. The next declaration, with only attributes in between.
    if (!pick) {
      for (std::size_t i = 0; i < decls_.size(); ++i) {
        if (decls_[i].begin >= a.spec_end) {
          if (only_attributes_between(a.spec_end, decls_[i].begin)) pick = i;
          break;
        }
      }
    }
    if (!pick) {
      if (!a.name.empty())
        rep_.error(opt_.header, a.loc,
                   "annotation '" + a.spelled + "' does not stand before a declaration",
                   static_cast<int>(a.spelled.size()));
      continue;
    }
    auto& t = targets_[*pick];
    t.decl = *pick;
    t.annotations.push_back(&a);
  }
}

// Why `c` cannot be woven ("" when it can).
std::string Scanner::unsupported(CXCursor c, const DeclEntry& d) {
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
  for (CXCursor p = clang_getCursorSemanticParent(c); !clang_Cursor_isNull(p) &&
                                                      clang_getCursorKind(p) != CXCursor_TranslationUnit;
       p = clang_getCursorSemanticParent(p)) {
    CXCursorKind pk = clang_getCursorKind(p);
    if (pk == CXCursor_ClassTemplate || pk == CXCursor_ClassTemplatePartialSpecialization)
      return "cannot weave a method of a class template";
  }
  // `= delete`: the extent ends with the `delete` keyword.
  auto last = std::lower_bound(tokens_.begin(), tokens_.end(), d.end,
                               [](const Token& t, unsigned off) { return t.offset < off; });
  if (last != tokens_.begin() && (last - 1)->text == "delete" && last - 1 != tokens_.begin() &&
      (last - 2)->text == "=")
    return "cannot weave a deleted function";
  if (clang_Cursor_isVariadic(c)) return "cannot weave a C variadic function";
  if (k == CXCursor_CXXMethod) {
    if (clang_getCXXAccessSpecifier(c) == CX_CXXPrivate)
      return "cannot weave a private method (the proxy class cannot call it)";
    if (clang_CXXMethod_isPureVirtual(c))
      return "cannot weave a pure virtual method (there is no implementation to call)";
    bool method_final = false;
    visit(c, [&](CXCursor ch) {
      if (clang_getCursorKind(ch) == CXCursor_CXXFinalAttr) method_final = true;
      return CXChildVisit_Continue;
    });
    if (method_final) return "cannot weave a final method (the proxy would override it)";
    CXCursor cls = clang_getCursorSemanticParent(c);
    for (CXCursor p = cls; is_class_kind(clang_getCursorKind(p)); p = clang_getCursorSemanticParent(p)) {
      bool final_ = false;
      visit(p, [&](CXCursor ch) {
        if (clang_getCursorKind(ch) == CXCursor_CXXFinalAttr) final_ = true;
        return CXChildVisit_Continue;
      });
      if (final_ && clang_equalCursors(p, cls))
        return "cannot weave a method of final class '" + spelling(cls) + "' (the proxy derives from it)";
      if (spelling(p).empty() || clang_Cursor_isAnonymous(p))
        return "cannot weave a method of an anonymous class";
      if (!clang_equalCursors(p, cls) || is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(p)))) {
        if (clang_getCXXAccessSpecifier(p) != CX_CXXPublic &&
            is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(p))))
          return "cannot weave a method of non-public nested class '" + spelling(p) + "'";
      }
    }
  }
  return "";
}

// Namespaces enclosing `c` (outermost first), stopping at classes.
bool Scanner::namespaces_of(CXCursor c, std::vector<NsPart>& ns, std::string& qualified, std::string& readable,
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
        rep_.error(opt_.header, at,
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
      rep_.error(opt_.header, at, "cannot weave a declaration in this scope");
      return false;
    }
  }
  return true;
}

ClassModel* Scanner::class_for(CXCursor cls, Loc at) {
  std::string usr = str(clang_getCursorUSR(cls));
  auto it = class_index_.find(usr);
  if (it != class_index_.end()) return &model_.classes[it->second];
  ClassModel m;
  m.usr = usr;
  std::string qualified, readable;
  // Namespaces of the outermost enclosing class.
  CXCursor outer = cls;
  while (is_class_kind(clang_getCursorKind(clang_getCursorSemanticParent(outer))))
    outer = clang_getCursorSemanticParent(outer);
  std::vector<NsPart> ns;
  std::string q2, r2;
  if (!namespaces_of(outer, ns, q2, r2, at)) return nullptr;
  m.ns = ns;
  if (!namespaces_of(cls, ns, qualified, readable, at)) return nullptr;
  m.ctor_name = spelling(cls);
  m.qualified = qualified + "::" + m.ctor_name;
  // Proxy name: Outer_Inner_woven.
  std::string chain;
  for (CXCursor p = cls; is_class_kind(clang_getCursorKind(p)); p = clang_getCursorSemanticParent(p))
    chain = spelling(p) + (chain.empty() ? "" : "_" + chain);
  m.proxy_name = chain + "_woven";
  model_.classes.push_back(std::move(m));
  class_index_[usr] = model_.classes.size() - 1;
  return &model_.classes.back();
}

bool Scanner::is_overloaded(CXCursor fn) {
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

std::vector<CXCursor> Scanner::find_members(CXCursor record, const std::string& name, std::set<std::string>* all,
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
        if (n == name) out.push_back(c);
      } else if (k == CXCursor_CXXBaseSpecifier) {
        CXCursor base = clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(c)));
        walk(base, depth + 1);
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

void Scanner::build_format_index() {
  format_index_built_ = true;
  std::function<void(CXCursor)> walk = [&](CXCursor parent) {
    visit(parent, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_ClassDecl ||
          k == CXCursor_StructDecl || k == CXCursor_FriendDecl) {
        walk(c);
      } else if (k == CXCursor_FunctionDecl) {
        std::string n = spelling(c);
        int want = n == "weave_key" ? 0 : n == "operator<<" ? 1 : -1;
        if (want >= 0 && clang_Cursor_getNumArguments(c) == want + 1) {
          CXType t = clang_getCanonicalType(strip_ref(clang_getCursorType(clang_Cursor_getArgument(c, want))));
          CXCursor d = clang_getTypeDeclaration(t);
          if (!clang_Cursor_isNull(d)) formattable_usrs_.insert(str(clang_getCursorUSR(d)));
        }
      }
      return CXChildVisit_Continue;
    });
  };
  walk(clang_getTranslationUnitCursor(tu_));
}

bool Scanner::formattable(CXType t) {
  t = clang_getCanonicalType(strip_ref(t));
  if (t.kind >= CXType_Bool && t.kind <= CXType_LongDouble) return true;
  if (t.kind == CXType_Float128 || t.kind == CXType_Half || t.kind == CXType_Float16) return true;
  if (t.kind == CXType_Enum || t.kind == CXType_Pointer) return true;  // pointers: C strings, or streamed
  if (t.kind != CXType_Record) return t.kind != CXType_Void && t.kind != CXType_NullPtr;
  std::string sp = unqual_spelling(t);
  if (sp.rfind("std::basic_string<", 0) == 0 || sp.rfind("std::basic_string_view<", 0) == 0) return true;
  if (clang_Type_getNumTemplateArguments(t) > 0) return true;  // left to weave/key.h's static_assert
  if (!format_index_built_) build_format_index();
  std::function<bool(CXCursor, int)> ok = [&](CXCursor rec, int depth) {
    if (clang_Cursor_isNull(rec) || depth > 16) return false;
    if (formattable_usrs_.count(str(clang_getCursorUSR(rec)))) return true;
    bool found = false;
    visit(rec, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_ConversionFunction) found = true;  // e.g. operator std::string_view()
      if (k == CXCursor_CXXBaseSpecifier &&
          ok(clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(c))), depth + 1))
        found = true;
      return found ? CXChildVisit_Break : CXChildVisit_Continue;
    });
    return found;
  };
  return ok(clang_getTypeDeclaration(t), 0);
}

bool Scanner::placeholder(const KeyPiece& p, CXCursor fn, const FunctionModel& f,
                          const std::function<void(int, int, const std::string&)>& err, std::string& expr) {
  // Head: a parameter name, or argN.
  int index = -1;
  for (std::size_t i = 0; i < f.params.size(); ++i)
    if (f.params[i].name == p.head) index = static_cast<int>(i);
  if (index < 0 && p.head.size() > 3 && p.head.rfind("arg", 0) == 0 &&
      std::all_of(p.head.begin() + 3, p.head.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    long n = std::stol(p.head.substr(3));
    if (n >= static_cast<long>(f.params.size())) {
      err(p.head_pos, static_cast<int>(p.head.size()),
          "placeholder '" + p.head + "' is out of range: '" + f.qualified_name + "' has " +
              std::to_string(f.params.size()) + (f.params.size() == 1 ? " parameter" : " parameters"));
      return false;
    }
    index = static_cast<int>(n);
  }
  if (index < 0) {
    std::vector<std::string> names;
    for (const auto& q : f.params) names.push_back(q.name);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    std::string hint = did_you_mean(p.head, names);
    err(p.head_pos, static_cast<int>(p.head.size()),
        "unknown parameter '" + p.head + "' in key template" +
            (hint.empty() ? (names.empty() ? std::string("; the method has no parameters")
                                           : "; parameters are: " + list)
                          : hint));
    return false;
  }
  expr = f.params[index].name;
  CXType t = clang_getCursorType(clang_Cursor_getArgument(fn, static_cast<unsigned>(index)));
  bool known = true;
  for (const auto& st : p.steps) {
    const std::string op = st.arrow ? "->" : ".";
    if (known) {
      CXType cur = clang_getCanonicalType(strip_ref(t));
      std::string tname = type_spelling(strip_ref(t));
      if (st.arrow) {
        if (cur.kind == CXType_Pointer) {
          cur = clang_getCanonicalType(clang_getPointeeType(cur));
        } else if (cur.kind == CXType_Record) {
          bool unsure = false;
          auto ops = find_members(clang_getTypeDeclaration(cur), "operator->", nullptr, &unsure);
          if (ops.empty() && unsure) {
            known = false;  // e.g. std::shared_ptr: operator-> lives in a dependent base
          } else if (ops.empty()) {
            err(st.pos, static_cast<int>(st.member.size()),
                "'->' used on '" + tname + "', which is not a pointer; use '.'");
            return false;
          }
          if (known) {
            CXType r = clang_getCanonicalType(strip_ref(clang_getResultType(clang_getCursorType(ops.front()))));
            if (r.kind == CXType_Pointer) cur = clang_getCanonicalType(clang_getPointeeType(r));
            else known = false;  // smart pointer template: not resolvable here
          }
        } else {
          err(st.pos, static_cast<int>(st.member.size()),
              "'->' used on '" + tname + "', which is not a pointer; use '.'");
          return false;
        }
      } else if (cur.kind == CXType_Pointer) {
        err(st.pos, static_cast<int>(st.member.size()),
            "'.' used on pointer type '" + tname + "'; use '->'");
        return false;
      }
      if (known && cur.kind != CXType_Record) {
        if (cur.kind == CXType_Unexposed) {
          known = false;
        } else {
          err(st.pos, static_cast<int>(st.member.size()),
              "no member named '" + st.member + "' in '" + type_spelling(cur) + "' (not a class type)");
          return false;
        }
      }
      if (known) {
        std::set<std::string> all;
        bool unsure = false;
        auto ms = find_members(clang_getTypeDeclaration(cur), st.member, &all, &unsure);
        std::string rec_name = unqual_spelling(cur);
        if (ms.empty() && unsure) {
          known = false;
          expr += op + st.member + (st.call ? "()" : "");
          continue;
        }
        if (ms.empty()) {
          all.erase("operator->");
          std::vector<std::string> cands(all.begin(), all.end());
          err(st.pos, static_cast<int>(st.member.size()),
              "no member named '" + st.member + "' in '" + rec_name + "'" + did_you_mean(st.member, cands));
          return false;
        }
        CXCursor m = ms.front();
        CXCursorKind mk = clang_getCursorKind(m);
        bool is_method = mk == CXCursor_CXXMethod || mk == CXCursor_FunctionTemplate;
        if (st.call && !is_method) {
          err(st.pos, static_cast<int>(st.member.size()),
              "'" + st.member + "' is a data member of '" + rec_name + "', not a method; remove the '()'");
          return false;
        }
        if (!st.call && is_method) {
          err(st.pos, static_cast<int>(st.member.size()),
              "'" + st.member + "' is a method of '" + rec_name + "'; call it as '" + st.member + "()'");
          return false;
        }
        if (is_method) {
          std::optional<CXCursor> zero;
          for (CXCursor c : ms)
            if (clang_getCursorKind(c) == CXCursor_CXXMethod && clang_Cursor_getNumArguments(c) == 0) zero = c;
          if (!zero) {
            err(st.pos, static_cast<int>(st.member.size()),
                "method '" + st.member + "' of '" + rec_name + "' takes arguments; only zero-argument calls "
                "are allowed in key templates");
            return false;
          }
          m = *zero;
        }
        if (clang_getCXXAccessSpecifier(m) != CX_CXXPublic) {
          err(st.pos, static_cast<int>(st.member.size()),
              "'" + st.member + "' is not a public member of '" + rec_name + "'");
          return false;
        }
        t = is_method ? clang_getResultType(clang_getCursorType(m)) : clang_getCursorType(m);
        CXType tc = clang_getCanonicalType(strip_ref(t));
        if (tc.kind == CXType_Unexposed || tc.kind == CXType_Invalid) known = false;
      }
    }
    expr += op + st.member + (st.call ? "()" : "");
  }
  if (known && !formattable(t)) {
    std::string tn = unqual_spelling(clang_getCanonicalType(strip_ref(t)));
    err(p.pos, 0, "type '" + tn + "' cannot be used in a key; add weave_key(const " + tn +
                      "&) or operator<<");
    return false;
  }
  return true;
}

bool Scanner::key_template(const RawValue& v, CXCursor fn, FunctionModel& f, int line_hint, KeyRender& out) {
  auto col_at = [&](int pos) -> Loc {
    if (v.char_cols.empty()) return v.loc;
    pos = std::clamp(pos, 0, static_cast<int>(v.char_cols.size()) - 1);
    return {v.loc.line, v.char_cols[pos]};
  };
  KeySyntaxError se;
  auto pieces = parse_key_template(v.text, se);
  if (!pieces) {
    rep_.error(opt_.header, col_at(se.pos), se.message, se.length);
    return false;
  }
  out.line = v.loc.line ? v.loc.line : line_hint;
  bool ok = true;
  for (const auto& p : *pieces) {
    if (!p.placeholder) {
      out.parts.push_back({false, p.literal});
      continue;
    }
    std::string expr;
    auto err = [&](int pos, int len, const std::string& msg) {
      if (len == 0) {  // whole placeholder
        std::size_t close = v.text.find('>', static_cast<std::size_t>(p.pos));
        while (close != std::string::npos && close > 0 && v.text[close - 1] == '-')
          close = v.text.find('>', close + 1);
        len = close == std::string::npos ? 1 : static_cast<int>(close) - p.pos + 1;
      }
      rep_.error(opt_.header, col_at(pos), msg, len);
    };
    if (!placeholder(p, fn, f, err, expr)) {
      ok = false;
      continue;
    }
    out.parts.push_back({true, expr});
  }
  return ok;
}

std::string cpp_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\0': r += "\\0"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
          r += buf;
        } else {
          r += c;
        }
    }
  }
  return r + "\"";
}

const char* kind_name(RawValue::Kind k) {
  switch (k) {
    case RawValue::string: return "a string";
    case RawValue::number: return "a number";
    case RawValue::identifier: return "an identifier";
    case RawValue::boolean: return "a boolean";
    case RawValue::list: return "a list";
  }
  return "?";
}

const char* expected_name(ArgType t) {
  switch (t) {
    case ArgType::template_: return "a key template string (e.g. \"order:<id>\")";
    case ArgType::template_list: return "a list of key template strings (e.g. [\"a:<x>\", \"b:<y>\"])";
    case ArgType::duration: return "a duration (e.g. 30s, 250ms, 2min, 1h)";
    case ArgType::integer: return "an integer";
    case ArgType::enumeration: return "one of";
    case ArgType::boolean: return "true or false";
    case ArgType::string: return "a string literal";
    case ArgType::identifier: return "an identifier";
  }
  return "?";
}

bool Scanner::fallback_exists(CXCursor fn, const std::string& name) {
  CXCursor parent = clang_getCursorSemanticParent(fn);
  if (is_class_kind(clang_getCursorKind(parent))) return !find_members(parent, name, nullptr).empty();
  bool found = false;
  std::string pusr = str(clang_getCursorUSR(parent));
  std::function<void(CXCursor)> walk = [&](CXCursor p) {
    visit(p, [&](CXCursor c) {
      CXCursorKind k = clang_getCursorKind(c);
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec) walk(c);
      else if ((k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate) && spelling(c) == name &&
               str(clang_getCursorUSR(clang_getCursorSemanticParent(c))) == pusr)
        found = true;
      return found ? CXChildVisit_Break : CXChildVisit_Continue;
    });
  };
  walk(clang_getTranslationUnitCursor(tu_));
  return found;
}

bool Scanner::annotation(const RawAnnotation& raw, CXCursor fn, FunctionModel& f, AnnotationModel& out,
                         std::string& fallback_name, Loc& fallback_loc) {
  const AnnotationDef* def = vocab_.find(raw.name);
  out.name = raw.name;
  out.line = raw.loc.line;
  out.col = raw.loc.col;
  bool ok = true;
  auto err = [&](Loc l, const std::string& m, int len = 1) {
    rep_.error(opt_.header, l, m, len);
    ok = false;
  };
  if (def->synchronous && f.ret_async)
    err(raw.loc,
        "'" + raw.name + "' ends when the call returns, but '" + f.name + "' returns '" + f.ret +
            "', whose work may still run after that; put the annotation on the function that does the work",
        static_cast<int>(raw.name.size()));
  std::map<std::string, const RawArg*> written;
  std::vector<std::string> arg_names = {"order"};
  for (const auto& a : def->args) arg_names.push_back(a.name);
  for (const auto& a : raw.args) {
    if (a.name != "order" && !def->find(a.name)) {
      err(a.loc, "unknown argument '" + a.name + "' for annotation '" + raw.name + "'" +
                     did_you_mean(a.name, arg_names),
          static_cast<int>(a.name.size()));
      continue;
    }
    if (written.count(a.name)) {
      err(a.loc, "duplicate argument '" + a.name + "' for annotation '" + raw.name + "'",
          static_cast<int>(a.name.size()));
      continue;
    }
    written[a.name] = &a;
  }
  // order
  if (auto it = written.find("order"); it != written.end()) {
    const RawValue& v = it->second->value;
    char* end = nullptr;
    long n = v.kind == RawValue::number ? std::strtol(v.text.c_str(), &end, 10) : 0;
    if (v.kind != RawValue::number || !end || *end)
      err(v.loc, "argument 'order' of '" + raw.name + "' expects an integer", v.length);
    else
      out.order = static_cast<int>(n);
  }
  // conflicts
  for (const auto& d : def->args)
    if (written.count(d.name))
      for (const auto& c : d.conflicts)
        if (written.count(c) && written[c]->loc.line * 100000 + written[c]->loc.col <
                                    written[d.name]->loc.line * 100000 + written[d.name]->loc.col)
          err(written[d.name]->loc, "'" + d.name + "' cannot be combined with '" + c + "'",
              static_cast<int>(d.name.size()));
  // Effective enum values (written or default) for required_if.
  auto effective = [&](const std::string& name) -> std::string {
    if (auto it = written.find(name); it != written.end() && it->second) return it->second->value.text;
    const ArgDef* d = def->find(name);
    if (d && d->default_value && d->default_value->is_string()) return d->default_value->get<std::string>();
    return "";
  };
  for (const auto& d : def->args) {
    auto it = written.find(d.name);
    const bool has = it != written.end();
    if (!d.required_if_arg.empty()) {
      bool cond = std::count(d.required_if_values.begin(), d.required_if_values.end(), effective(d.required_if_arg));
      std::string vals;
      for (const auto& v : d.required_if_values) vals += (vals.empty() ? "" : "|") + v;
      if (cond && !has) {
        const RawArg* cause = written.count(d.required_if_arg) ? written[d.required_if_arg] : nullptr;
        err(cause ? cause->value.loc : raw.loc,
            "missing argument '" + d.name + "': " + d.required_if_arg + "=" + effective(d.required_if_arg) +
                " needs '" + d.name + "=...'",
            cause ? cause->value.length : static_cast<int>(raw.spelled.size()));
        continue;
      }
      if (!cond && has) {
        err(it->second->loc, "argument '" + d.name + "' is only allowed with " + d.required_if_arg + "=" + vals,
            static_cast<int>(d.name.size()));
        continue;
      }
    }
    if (d.required && !has) {
      err(raw.loc, "annotation '" + raw.name + "' requires argument '" + d.name + "'",
          static_cast<int>(raw.spelled.size()));
      continue;
    }
    if (!has) {
      // Default value.
      bool conflicting = false;
      for (const auto& c : d.conflicts) conflicting |= written.count(c) > 0;
      if (conflicting) continue;
      if (d.default_qualified_name) {
        std::string key = f.qualified_name;
        if (is_overloaded(fn)) {
          std::string types;
          for (unsigned i = 0; i < f.params.size(); ++i)
            types += (i ? ", " : "") + type_spelling(clang_getCursorType(clang_Cursor_getArgument(fn, i)));
          key += "(" + types + ")";
        }
        out.args.push_back({d.name, "::weave::ArgValue::of_text(" + cpp_string(key) + ")"});
        continue;
      }
      if (!d.default_value) continue;
      const auto& j = *d.default_value;
      RawValue v;
      v.loc = raw.loc;
      if (j.is_string()) {
        v.text = j.get<std::string>();
        v.kind = d.type == ArgType::template_ || d.type == ArgType::string ? RawValue::string
                 : d.type == ArgType::duration && v.text != "forever"  ? RawValue::number
                                                                        : RawValue::identifier;
      } else if (j.is_boolean()) {
        v.kind = RawValue::boolean;
        v.text = j.get<bool>() ? "true" : "false";
      } else if (j.is_number_integer()) {
        v.kind = RawValue::number;
        v.text = std::to_string(j.get<long long>());
      } else if (j.is_array()) {
        v.kind = RawValue::list;
        for (const auto& e : j) {
          RawValue item;
          item.kind = RawValue::string;
          item.loc = raw.loc;
          item.text = e.is_string() ? e.get<std::string>() : e.dump();
          v.items.push_back(item);
        }
      }
      RawArg synthetic{d.name, raw.loc, v};
      written[d.name] = nullptr;  // marks "has a value" without a source position
      // Convert the default like a written value.
      std::string code;
      const RawValue& val = synthetic.value;
      if (d.type == ArgType::template_) {
        KeyRender kr;
        if (!key_template(val, fn, f, raw.loc.line, kr)) { ok = false; continue; }
        code = "::weave::ArgValue::of_template(" + std::to_string(f.slots.size()) + ")";
        f.slots.push_back(std::move(kr));
      } else if (d.type == ArgType::template_list) {
        int first = static_cast<int>(f.slots.size());
        for (const auto& item : val.items) {
          KeyRender kr;
          if (!key_template(item, fn, f, raw.loc.line, kr)) { ok = false; continue; }
          f.slots.push_back(std::move(kr));
        }
        code = "::weave::ArgValue::of_template_list(" + std::to_string(first) + ", " +
               std::to_string(f.slots.size() - first) + ")";
      } else if (d.type == ArgType::duration) {
        std::int64_t ms = 0;
        if (val.text == "forever") code = "::weave::ArgValue::of_forever()";
        else if (parse_duration(val.text, ms).empty())
          code = "::weave::ArgValue::of_duration_ms(" + std::to_string(ms) + ")";
      } else if (d.type == ArgType::integer) {
        code = "::weave::ArgValue::of_integer(" + val.text + ")";
      } else if (d.type == ArgType::boolean) {
        code = "::weave::ArgValue::of_bool(" + val.text + ")";
      } else if (d.type == ArgType::enumeration) {
        code = "::weave::ArgValue::of_enum(" + cpp_string(val.text) + ")";
      } else {
        code = "::weave::ArgValue::of_text(" + cpp_string(val.text) + ")";
      }
      if (!code.empty()) out.args.push_back({d.name, code});
      continue;
    }
    // Written value: check its type.
    const RawArg& a = *it->second;
    const RawValue& v = a.value;
    auto wrong = [&] {
      std::string exp = expected_name(d.type);
      if (d.type == ArgType::enumeration) {
        std::string vals;
        for (const auto& x : d.values) vals += (vals.empty() ? " " : ", ") + x;
        exp += vals;
      }
      err(v.loc, "argument '" + d.name + "' of '" + raw.name + "' expects " + exp + ", not " + kind_name(v.kind),
          v.length);
    };
    std::string code;
    switch (d.type) {
      case ArgType::template_: {
        if (v.kind != RawValue::string) { wrong(); continue; }
        KeyRender kr;
        if (!key_template(v, fn, f, raw.loc.line, kr)) { ok = false; continue; }
        code = "::weave::ArgValue::of_template(" + std::to_string(f.slots.size()) + ")";
        f.slots.push_back(std::move(kr));
        break;
      }
      case ArgType::template_list: {
        std::vector<const RawValue*> items;
        if (v.kind == RawValue::string) items.push_back(&v);
        else if (v.kind == RawValue::list) for (const auto& x : v.items) items.push_back(&x);
        else { wrong(); continue; }
        std::vector<KeyRender> renders;
        bool good = true;
        for (const RawValue* x : items) {
          if (x->kind != RawValue::string) {
            err(x->loc, "argument '" + d.name + "' of '" + raw.name + "' expects key template strings, not " +
                            kind_name(x->kind), x->length);
            good = false;
            continue;
          }
          KeyRender kr;
          if (!key_template(*x, fn, f, raw.loc.line, kr)) { good = false; continue; }
          renders.push_back(std::move(kr));
        }
        if (!good) { ok = false; continue; }
        if (renders.empty()) {
          err(v.loc, "argument '" + d.name + "' needs at least one key template", v.length);
          continue;
        }
        int first = static_cast<int>(f.slots.size());
        for (auto& r : renders) f.slots.push_back(std::move(r));
        code = "::weave::ArgValue::of_template_list(" + std::to_string(first) + ", " +
               std::to_string(renders.size()) + ")";
        break;
      }
      case ArgType::duration: {
        if (v.kind == RawValue::identifier && v.text == "forever") {
          if (!d.forever) {
            err(v.loc, "argument '" + d.name + "' of '" + raw.name + "' does not accept 'forever'", v.length);
            continue;
          }
          code = "::weave::ArgValue::of_forever()";
          break;
        }
        if (v.kind != RawValue::number) { wrong(); continue; }
        if (v.text[0] == '-') {
          err(v.loc, "duration '" + v.text + "' must not be negative", v.length);
          continue;
        }
        std::int64_t ms = 0;
        std::string e = parse_duration(v.text, ms);
        if (!e.empty()) {
          err(v.loc, e, v.length);
          continue;
        }
        code = "::weave::ArgValue::of_duration_ms(" + std::to_string(ms) + ")";
        break;
      }
      case ArgType::integer: {
        char* end = nullptr;
        if (v.kind != RawValue::number) { wrong(); continue; }
        long long n = std::strtoll(v.text.c_str(), &end, 10);
        if (!end || *end) {
          err(v.loc, "argument '" + d.name + "' of '" + raw.name + "' expects an integer, not '" + v.text + "'",
              v.length);
          continue;
        }
        code = "::weave::ArgValue::of_integer(" + std::to_string(n) + ")";
        break;
      }
      case ArgType::enumeration: {
        if (v.kind != RawValue::identifier) { wrong(); continue; }
        if (!std::count(d.values.begin(), d.values.end(), v.text)) {
          std::string vals;
          for (const auto& x : d.values) vals += (vals.empty() ? "" : ", ") + x;
          err(v.loc, "invalid value '" + v.text + "' for argument '" + d.name + "' of '" + raw.name +
                         "'; expected one of: " + vals + did_you_mean(v.text, d.values), v.length);
          continue;
        }
        code = "::weave::ArgValue::of_enum(" + cpp_string(v.text) + ")";
        break;
      }
      case ArgType::boolean:
        if (v.kind != RawValue::boolean) { wrong(); continue; }
        code = "::weave::ArgValue::of_bool(" + v.text + ")";
        break;
      case ArgType::string:
        if (v.kind != RawValue::string) { wrong(); continue; }
        code = "::weave::ArgValue::of_text(" + cpp_string(v.text) + ")";
        break;
      case ArgType::identifier:
        if (v.kind != RawValue::identifier) { wrong(); continue; }
        if (d.is_fallback) {
          if (!fallback_exists(fn, v.text)) {
            err(v.loc, "no function named '" + v.text + "' in the scope of '" + f.qualified_name +
                           "' to use as fallback", v.length);
            continue;
          }
          fallback_name = v.text;
          fallback_loc = v.loc;
        }
        code = "::weave::ArgValue::of_text(" + cpp_string(v.text) + ")";
        break;
    }
    out.args.push_back({d.name, code});
  }
  // Skip rules (e.g. on_busy=skip) and noexcept + throw.
  for (const auto& d : def->args) {
    auto it = written.find(d.name);
    if (it == written.end() || !it->second) continue;
    const RawValue& v = it->second->value;
    if (std::count(d.skip_values.begin(), d.skip_values.end(), v.text) && f.skip == FunctionModel::Skip::cannot) {
      bool has_fallback = false;
      for (const auto& o : def->args) has_fallback |= o.is_fallback && written.count(o.name) && written[o.name];
      if (!has_fallback)
        err(v.loc, d.name + "=" + v.text + " needs a method that returns void or std::optional<T> (or a fallback); '" +
                       f.qualified_name + "' returns '" + f.ret + "'", v.length);
    }
  }
  if (!f.noexcept_text.empty() && effective("on_busy") == "throw" && def->find("on_busy")) {
    Loc l = written.count("on_busy") && written["on_busy"] ? written["on_busy"]->value.loc : raw.loc;
    rep_.warning(opt_.header, l,
                 "'" + f.qualified_name + "' is noexcept but on_busy=throw: a busy lock will call std::terminate",
                 static_cast<int>(raw.spelled.size()));
  }
  return ok;
}

void Scanner::process(const DeclEntry& d, const std::vector<const RawAnnotation*>& anns) {
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
  if (!why.empty()) {
    rep_.error(opt_.header, first->loc, why, static_cast<int>(first->spelled.size()));
    return;
  }
  const bool member = clang_getCursorKind(c) == CXCursor_CXXMethod;
  FunctionModel f;
  f.id = next_id_++;
  f.member = member;
  f.name = spelling(c);
  f.decl_line = loc_of(clang_getCursorLocation(c)).line;
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
  // Types: as written (resolves inside the reopened namespace / derived class),
  // canonical (fully qualified) for nested classes whose proxy lives elsewhere.
  auto type_text = [&](CXType t) {
    std::string s = nested ? type_spelling(clang_getCanonicalType(t)) : type_spelling(t);
    if (s.find('(') != std::string::npos || s.find('[') != std::string::npos)
      s = "::std::type_identity_t<" + s + ">";
    return s;
  };
  CXType fty = clang_getCursorType(c);
  CXType rty = clang_getResultType(fty);
  f.ret = type_text(rty);
  f.ret_void = rty.kind == CXType_Void;
  f.ret_async = is_async_result(rty);
  std::string canon_ret = type_spelling(clang_getCanonicalType(rty));
  f.is_static = member && clang_CXXMethod_isStatic(c);
  f.is_const = member && clang_CXXMethod_isConst(c);
  f.is_virtual = member && clang_CXXMethod_isVirtual(c);
  f.is_protected = member && clang_getCXXAccessSpecifier(c) == CX_CXXProtected;
  auto rq = clang_Type_getCXXRefQualifier(fty);
  f.ref_qualifier = rq == CXRefQualifier_LValue ? "&" : rq == CXRefQualifier_RValue ? "&&" : "";
  int n_args = clang_Cursor_getNumArguments(c);
  unsigned params_end = d.name;
  std::set<std::string> used_names;
  for (int i = 0; i < n_args; ++i) used_names.insert(spelling(clang_Cursor_getArgument(c, i)));
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
    pm.move = pt.kind == CXType_RValueReference || canon.kind == CXType_RValueReference ||
              canon.kind == CXType_Record;
    // Default argument: the text after the top-level '=' of the parameter.
    CXSourceRange r = clang_getCursorExtent(p);
    unsigned pb = offset_of(clang_getRangeStart(r)), pe = offset_of(clang_getRangeEnd(r));
    unsigned from = spelling(p).empty() ? pb : offset_of(clang_getCursorLocation(p));
    params_end = std::max(params_end, pe);
    int depth = 0;
    for (auto it = std::lower_bound(tokens_.begin(), tokens_.end(), from,
                                    [](const Token& t, unsigned off) { return t.offset < off; });
         it != tokens_.end() && it->offset < pe; ++it) {
      if (it->kind != Token::punct) continue;
      if (it->text == "(" || it->text == "[" || it->text == "{") ++depth;
      else if (it->text == ")" || it->text == "]" || it->text == "}") --depth;
      else if (it->text == "=" && depth == 0) {
        std::string t = nested ? qualified_text(it + 1, pe) : text(it->offset + 1, pe);
        auto b = t.find_first_not_of(" \t\r\n"), e = t.find_last_not_of(" \t\r\n");
        pm.default_text = b == std::string::npos ? "" : t.substr(b, e - b + 1);
        break;
      }
    }
    f.params.push_back(std::move(pm));
  }
  // noexcept: copy `noexcept(...)` as written, else plain noexcept.
  int ex = clang_getCursorExceptionSpecificationType(c);
  if (ex == CXCursor_ExceptionSpecificationKind_BasicNoexcept || ex == CXCursor_ExceptionSpecificationKind_DynamicNone ||
      ex == CXCursor_ExceptionSpecificationKind_NoThrow) {
    f.noexcept_text = "noexcept";
  } else if (ex == CXCursor_ExceptionSpecificationKind_ComputedNoexcept) {
    f.noexcept_text = "noexcept";
    auto it = std::lower_bound(tokens_.begin(), tokens_.end(), params_end,
                               [](const Token& t, unsigned off) { return t.offset < off; });
    for (; it != tokens_.end() && it->offset < d.end; ++it)
      if (it->text == "noexcept") {
        if (it + 1 != tokens_.end() && (it + 1)->text == "(") {
          int depth = 0;
          auto e = it + 1;
          for (; e != tokens_.end(); ++e) {
            if (e->text == "(") ++depth;
            if (e->text == ")" && --depth == 0) break;
          }
          if (e != tokens_.end()) f.noexcept_text = text(it->offset, e->offset + 1);
        }
        break;
      }
  }
  // Skip behaviour by return type.
  if (f.ret_void) f.skip = FunctionModel::Skip::nothing;
  else if (canon_ret.rfind("std::optional<", 0) == 0) f.skip = FunctionModel::Skip::nullopt;

  // Annotations.
  bool ok = true;
  std::vector<AnnotationModel> list;
  std::string fallback;
  Loc fallback_loc;
  for (auto* a : anns) {
    if (a->name.empty()) {
      ok = false;
      continue;
    }
    AnnotationModel am;
    std::string fb;
    Loc fbl;
    if (!annotation(*a, c, f, am, fb, fbl)) ok = false;
    if (!fb.empty()) {
      if (!fallback.empty() && fallback != fb) {
        rep_.error(opt_.header, fbl, "conflicting fallbacks '" + fallback + "' and '" + fb + "' on one method",
                   static_cast<int>(fb.size()));
        ok = false;
      }
      fallback = fb;
      fallback_loc = fbl;
    }
    list.push_back(std::move(am));
  }
  if (!ok) return;
  if (!fallback.empty()) {
    f.skip = FunctionModel::Skip::fallback;
    f.fallback = fallback;
  }
  std::stable_sort(list.begin(), list.end(),
                   [](const AnnotationModel& a, const AnnotationModel& b) { return a.order < b.order; });
  f.annotations = std::move(list);
  if (member) cls->methods.push_back(std::move(f));
  else model_.functions.push_back(std::move(f));
}

}  // namespace

bool scan(const ScanOptions& opt, const Vocabulary& vocab, Reporter& rep, Model& model) {
  model.header = opt.header;
  Scanner s(opt, vocab, rep, model);
  return s.run();
}

}  // namespace weavegen
