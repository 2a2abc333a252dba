#include "declarations.h"

#include <algorithm>
#include <optional>

#include "clang_util.h"

namespace weavegen {

namespace {

void collect(CXCursor parent, CXFile file, std::vector<DeclEntry>& out) {
  visit(parent, [&](CXCursor c) {
    CXCursorKind k = clang_getCursorKind(c);
    if (!clang_isDeclaration(k) || k == CXCursor_CXXAccessSpecifier) return CXChildVisit_Continue;
    if (!written_in(clang_getCursorLocation(c), file)) return CXChildVisit_Continue;
    CXSourceRange r = clang_getCursorExtent(c);
    out.push_back({c, file_offset(clang_getRangeStart(r)), file_offset(clang_getRangeEnd(r)),
                   file_offset(clang_getCursorLocation(c))});
    if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || is_class_kind(k)) collect(c, file, out);
    return CXChildVisit_Continue;
  });
}

// Index just past the `(...)` group opening at `it` (or `it` when none).
std::vector<Token>::const_iterator skip_parens(std::vector<Token>::const_iterator it,
                                               std::vector<Token>::const_iterator end) {
  if (it == end || it->text != "(") return it;
  int depth = 0;
  for (; it != end; ++it) {
    if (it->text == "(") ++depth;
    if (it->text == ")" && --depth == 0) return it + 1;
  }
  return end;
}

// True when [from, to) holds only attribute-specifiers, GNU/MS attributes,
// alignas and macro uses.
bool only_attributes_between(const Source& src, unsigned from, unsigned to) {
  const auto end = src.tokens.end();
  for (auto it = src.token_at(from); it != end && it->offset < to;) {
    if (const MacroUse* m = src.macro_at(it->offset)) {
      while (it != end && it->offset < m->range.end) ++it;
      continue;
    }
    if (it->text == "[" && it + 1 != end && (it + 1)->text == "[") {
      int depth = 0;
      for (; it != end; ++it) {
        if (it->text == "[") ++depth;
        if (it->text == "]" && --depth == 0) break;
      }
      if (it != end) ++it;
      continue;
    }
    if (it->text == "alignas" || it->text == "__attribute__" || it->text == "__declspec") {
      it = skip_parens(it + 1, end);
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

std::vector<DeclEntry> index_declarations(CXTranslationUnit tu, CXFile file) {
  std::vector<DeclEntry> decls;
  collect(clang_getTranslationUnitCursor(tu), file, decls);
  std::stable_sort(decls.begin(), decls.end(), [](const DeclEntry& a, const DeclEntry& b) { return a.begin < b.begin; });
  return decls;
}

std::map<std::size_t, std::vector<const RawAnnotation*>> attach_annotations(
    const std::vector<RawAnnotation>& annotations, const std::vector<DeclEntry>& decls, const Source& src,
    Reporter& rep) {
  std::map<std::size_t, std::vector<const RawAnnotation*>> out;
  for (const auto& a : annotations) {
    std::optional<std::size_t> pick;
    // 1. A declaration whose extent encloses the attribute and whose name follows it.
    for (std::size_t i = 0; i < decls.size(); ++i) {
      const auto& d = decls[i];
      if (d.begin < a.spec_begin && d.end >= a.spec_end && d.name >= a.spec_end)
        if (!pick || decls[*pick].begin <= d.begin) pick = i;
    }
    // 2. The next declaration, with only attributes and macro uses in between.
    if (!pick) {
      for (std::size_t i = 0; i < decls.size(); ++i)
        if (decls[i].begin >= a.spec_end) {
          if (only_attributes_between(src, a.spec_end, decls[i].begin)) pick = i;
          break;
        }
    }
    const MacroUse* macro = nullptr;
    {
      auto it = src.token_at(a.spec_end);
      if (it != src.tokens.end()) macro = src.macro_at(it->offset);
    }
    if (pick && macro && macro->range.contains(decls[*pick].begin)) {
      // A macro that expands to several declarations: which one is meant?
      std::vector<std::string> names;
      for (std::size_t i = *pick; i < decls.size() && decls[i].begin == decls[*pick].begin; ++i)
        if (clang_getCursorKind(clang_getCursorSemanticParent(decls[i].cursor)) ==
            clang_getCursorKind(clang_getCursorSemanticParent(decls[*pick].cursor)))
          names.push_back(spelling(decls[i].cursor));
      if (names.size() > 1) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
        if (!a.name.empty())
          rep.error(src.path, a.loc,
                    "annotation '" + a.spelled + "' stands before macro '" + macro->name + "', which declares " +
                        std::to_string(names.size()) + " functions (" + list +
                        "); declare the annotated one without the macro",
                    static_cast<int>(a.spelled.size()));
        continue;
      }
    }
    if (!pick) {
      if (a.name.empty()) continue;  // already diagnosed
      if (macro)
        rep.error(src.path, a.loc,
                  "annotation '" + a.spelled + "' stands before macro '" + macro->name +
                      "', whose expansion declares no function weavegen can weave; put the annotation in front of "
                      "a function declaration (the macro may stay between them if it expands to attributes)",
                  static_cast<int>(a.spelled.size()));
      else
        rep.error(src.path, a.loc, "annotation '" + a.spelled + "' does not stand before a declaration",
                  static_cast<int>(a.spelled.size()));
      continue;
    }
    out[*pick].push_back(&a);
  }
  return out;
}

}  // namespace weavegen
