// Reading `[[...]]` attribute-specifiers from the main file's token stream
// (clang drops unknown attributes from the AST, so weavegen reads tokens).
#pragma once

#include <string>
#include <vector>

#include "diagnostics.h"
#include "vocabulary.h"

namespace weavegen {

struct Token {
  enum Kind { punct, keyword, ident, literal } kind = punct;
  std::string text;
  unsigned offset = 0;  // byte offset in the main file
  Loc loc;
};

struct RawValue {
  enum Kind { string, number, identifier, boolean, list } kind = string;
  std::string text;           // decoded string, or the spelling of the token(s)
  Loc loc;
  int length = 1;             // in source columns
  std::vector<int> char_cols; // string: column of each decoded character (+1 past end)
  std::vector<RawValue> items;
};

struct RawArg {
  std::string name;
  Loc loc;
  RawValue value;
};

// One weave annotation inside a `[[...]]` specifier.
struct RawAnnotation {
  std::string name;    // without `weave::`
  std::string spelled; // as written, e.g. "weave::lock"
  Loc loc;             // of the name (after any scope)
  unsigned spec_begin = 0, spec_end = 0;  // offsets of the enclosing `[[` and just past `]]`
  std::vector<RawArg> args;
};

struct AttributeOptions {
  // An unscoped attribute that is neither standard nor an annotation is an
  // error (a misspelt annotation would leave the method unwoven); with this
  // set it is only a warning. Scoped vendor attributes (gnu::...) are fine.
  bool allow_unknown = false;
};

// Scans the tokens for attribute-specifiers. Weave annotations are returned;
// syntax errors and unknown attributes are reported.
std::vector<RawAnnotation> scan_attributes(const std::vector<Token>& tokens, const Vocabulary& vocab,
                                           Reporter& rep, const std::string& path, const AttributeOptions& options);

// For diagnostics: " (did you mean 'lock'?)" or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace weavegen
