// Small libclang helpers shared by weavegen's stages: strings, traversal and
// positions. Positions are *file* locations in the main file: a token that a
// macro produced is placed where the macro is used (or where its argument is
// written), never inside the #define.
#pragma once

#include <clang-c/Index.h>

#include <functional>
#include <string>

#include "diagnostics.h"

namespace weavegen {

std::string str(CXString s);
std::string spelling(CXCursor c);
// A type as libclang 14 and 15 spell it: a record, enum or typedef named
// without a scope is spelled with its scope ("bank::Account"), whatever the
// libclang (16 spells it as written, "Account"); the generated code and the
// result codec's name are then the same with every version.
std::string type_spelling(CXType t);
// Spelling without top-level const/volatile.
std::string unqual_spelling(CXType t);
std::string usr(CXCursor c);

void visit(CXCursor parent, const std::function<CXChildVisitResult(CXCursor)>& f);

// Byte offset / line and column of `l` in the file it is written in (macro
// uses: the place of the use).
unsigned file_offset(CXSourceLocation l);
Loc file_loc(CXSourceLocation l);
CXFile file_of(CXSourceLocation l);
// True when `l` is written in `file` (a macro expansion counts where it is used).
bool written_in(CXSourceLocation l, CXFile file);
// True when `l` lies inside a macro expansion (not written directly).
bool from_macro(CXSourceLocation l);

bool is_class_kind(CXCursorKind k);
CXType strip_ref(CXType t);

// "::ns::Outer::name" for a declaration at namespace or class scope; "" for
// one inside a function or an anonymous scope (nothing to qualify).
std::string fully_qualified(CXCursor d);

}  // namespace weavegen
