#include "clang_util.h"

#include <cstring>

namespace weavegen {

std::string str(CXString s) {
  const char* c = clang_getCString(s);
  std::string r = c ? c : "";
  clang_disposeString(s);
  return r;
}

namespace {

// Removes the leading "const " and "volatile " of a spelling; returns them.
std::string take_cv(std::string& s) {
  std::string cv;
  for (bool again = true; again;) {
    again = false;
    for (const char* q : {"const ", "volatile "})
      if (s.rfind(q, 0) == 0) {
        cv += q;
        s.erase(0, std::strlen(q));
        again = true;
      }
  }
  return cv;
}

}  // namespace

std::string spelling(CXCursor c) { return str(clang_getCursorSpelling(c)); }
std::string type_spelling(CXType t) {
  std::string s = str(clang_getTypeSpelling(t));
  // The type that references and pointers lead to is printed first: "const Account &".
  CXType leaf = t;
  while (leaf.kind == CXType_Pointer || leaf.kind == CXType_LValueReference || leaf.kind == CXType_RValueReference)
    leaf = clang_getPointeeType(leaf);
  // Only libclang 16 and later make a name written with neither scope nor
  // keyword an elaborated type.
  if (leaf.kind != CXType_Elaborated) return s;
  const std::string written = str(clang_getTypeSpelling(leaf));
  if (s.rfind(written, 0) != 0) return s;
  std::string name = written;
  const std::string cv = take_cv(name);
  if (name.substr(0, name.find('<')).find("::") != std::string::npos) return s;
  for (const char* keyword : {"struct ", "class ", "union ", "enum ", "typename "})
    if (name.rfind(keyword, 0) == 0) return s;
  return cv + str(clang_getTypeSpelling(clang_Type_getNamedType(leaf))) + s.substr(written.size());
}
std::string usr(CXCursor c) { return str(clang_getCursorUSR(c)); }

std::string unqual_spelling(CXType t) {
  std::string s = type_spelling(t);
  take_cv(s);
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

unsigned file_offset(CXSourceLocation l) {
  unsigned off = 0;
  clang_getFileLocation(l, nullptr, nullptr, nullptr, &off);
  return off;
}

Loc file_loc(CXSourceLocation l) {
  unsigned line = 0, col = 0;
  clang_getFileLocation(l, nullptr, &line, &col, nullptr);
  return {static_cast<int>(line), static_cast<int>(col)};
}

CXFile file_of(CXSourceLocation l) {
  CXFile f = nullptr;
  clang_getFileLocation(l, &f, nullptr, nullptr, nullptr);
  return f;
}

bool written_in(CXSourceLocation l, CXFile file) {
  CXFile f = file_of(l);
  return f && file && clang_File_isEqual(f, file);
}

bool from_macro(CXSourceLocation l) {
  unsigned spell = 0, file = 0;
  CXFile sf = nullptr, ff = nullptr;
  clang_getSpellingLocation(l, &sf, nullptr, nullptr, &spell);
  clang_getFileLocation(l, &ff, nullptr, nullptr, &file);
  return spell != file || !sf || !ff || !clang_File_isEqual(sf, ff);
}

bool is_class_kind(CXCursorKind k) {
  return k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

CXType strip_ref(CXType t) {
  if (t.kind == CXType_LValueReference || t.kind == CXType_RValueReference) return clang_getPointeeType(t);
  return t;
}

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

}  // namespace weavegen
