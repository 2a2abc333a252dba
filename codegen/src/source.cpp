#include "source.h"

#include <algorithm>

#include "clang_util.h"

namespace weavegen {

std::vector<Token>::const_iterator Source::token_at(unsigned offset) const {
  return std::lower_bound(tokens.begin(), tokens.end(), offset,
                          [](const Token& t, unsigned off) { return t.offset < off; });
}

const MacroUse* Source::macro_at(unsigned offset) const {
  for (const auto& m : macro_uses)
    if (m.range.contains(offset)) return &m;
  return nullptr;
}

namespace {

std::vector<Token> raw_tokens(CXTranslationUnit tu, CXFile file, unsigned size) {
  CXSourceRange all = clang_getRange(clang_getLocationForOffset(tu, file, 0), clang_getLocationForOffset(tu, file, size));
  CXToken* toks = nullptr;
  unsigned n = 0;
  clang_tokenize(tu, all, &toks, &n);
  std::vector<Token> out;
  out.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    CXTokenKind k = clang_getTokenKind(toks[i]);
    if (k == CXToken_Comment) continue;
    Token t;
    t.kind = k == CXToken_Punctuation  ? Token::punct
             : k == CXToken_Keyword    ? Token::keyword
             : k == CXToken_Identifier ? Token::ident
                                       : Token::literal;
    t.text = str(clang_getTokenSpelling(tu, toks[i]));
    CXSourceLocation l = clang_getTokenLocation(tu, toks[i]);
    t.offset = file_offset(l);
    t.loc = file_loc(l);
    out.push_back(std::move(t));
  }
  clang_disposeTokens(tu, toks, n);
  return out;
}

// Ranges the preprocessor skipped (inactive #if branches).
std::vector<Range> skipped_ranges(CXTranslationUnit tu, CXFile file) {
  std::vector<Range> out;
  CXSourceRangeList* list = clang_getSkippedRanges(tu, file);
  if (!list) return out;
  for (unsigned i = 0; i < list->count; ++i)
    out.push_back({file_offset(clang_getRangeStart(list->ranges[i])), file_offset(clang_getRangeEnd(list->ranges[i]))});
  clang_disposeSourceRangeList(list);
  return out;
}

// End of the directive line starting at `hash` (backslash-newlines continue it).
unsigned directive_end(const std::string& text, unsigned hash) {
  std::size_t i = hash;
  while (true) {
    std::size_t nl = text.find('\n', i);
    if (nl == std::string::npos) return static_cast<unsigned>(text.size());
    std::size_t j = nl;
    if (j > 0 && text[j - 1] == '\r') --j;
    if (j == 0 || text[j - 1] != '\\') return static_cast<unsigned>(nl);
    i = nl + 1;
  }
}

bool starts_line(const std::string& text, unsigned off) {
  for (std::size_t i = off; i > 0; --i) {
    char c = text[i - 1];
    if (c == '\n') return true;
    if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v') return false;
  }
  return true;
}

}  // namespace

Source read_source(CXTranslationUnit tu, CXFile file, const std::string& path) {
  Source s;
  s.path = path;
  size_t size = 0;
  const char* data = clang_getFileContents(tu, file, &size);
  s.text.assign(data ? data : "", data ? size : 0);

  const std::vector<Range> skipped = skipped_ranges(tu, file);
  auto is_skipped = [&](unsigned off) {
    return std::any_of(skipped.begin(), skipped.end(), [&](const Range& r) { return r.contains(off); });
  };
  std::vector<Token> all = raw_tokens(tu, file, static_cast<unsigned>(s.text.size()));
  for (std::size_t i = 0; i < all.size(); ++i) {
    Token& t = all[i];
    if (is_skipped(t.offset)) continue;
    if (t.kind == Token::punct && t.text == "#" && starts_line(s.text, t.offset)) {
      const unsigned end = directive_end(s.text, t.offset);
      std::vector<Token> line;
      for (; i < all.size() && all[i].offset < end; ++i) line.push_back(std::move(all[i]));
      --i;
      if (line.size() > 1 && line[1].text == "define") s.definitions.push_back(std::move(line));
      continue;
    }
    s.tokens.push_back(std::move(t));
  }

  visit(clang_getTranslationUnitCursor(tu), [&](CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_MacroExpansion) return CXChildVisit_Continue;
    CXSourceRange r = clang_getCursorExtent(c);
    if (!written_in(clang_getRangeStart(r), file)) return CXChildVisit_Continue;
    s.macro_uses.push_back({spelling(c), {file_offset(clang_getRangeStart(r)), file_offset(clang_getRangeEnd(r))}});
    return CXChildVisit_Continue;
  });
  return s;
}

}  // namespace weavegen
