// Stage 1 of weavegen: the main file's tokens as the compiler saw them.
//
// clang drops attributes it does not know from the AST, so annotations are
// read from tokens. Only tokens the preprocessor kept count: tokens in
// inactive #if/#ifdef branches and on directive lines are left out, and every
// macro use is recorded so later stages can see through export macros and
// macro-produced declarations.
#pragma once

#include <clang-c/Index.h>

#include <string>
#include <vector>

#include "attributes.h"

namespace weavegen {

struct Range {
  unsigned begin = 0, end = 0;  // byte offsets, [begin, end)
  bool contains(unsigned off) const { return off >= begin && off < end; }
};

struct MacroUse {
  std::string name;
  Range range;  // the macro name and its arguments
};

struct Source {
  std::string path;           // as given on the command line
  std::string text;           // the file's bytes
  std::vector<Token> tokens;  // active tokens, in order
  std::vector<MacroUse> macro_uses;
  // Tokens of each #define line (to find annotations the macro would hide).
  std::vector<std::vector<Token>> definitions;

  // First token at or after `offset`.
  std::vector<Token>::const_iterator token_at(unsigned offset) const;
  // The macro use covering `offset`, or nullptr.
  const MacroUse* macro_at(unsigned offset) const;
  std::string slice(unsigned b, unsigned e) const { return text.substr(b, e - b); }
};

// Reads `file` of `tu` (parsed with CXTranslationUnit_DetailedPreprocessingRecord).
Source read_source(CXTranslationUnit tu, CXFile file, const std::string& path);

}  // namespace weavegen
