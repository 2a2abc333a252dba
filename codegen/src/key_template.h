// Key templates: literal text plus placeholders, e.g. "order:<order.customer().id()>".
//
//   template    := ( literal-char | "<<" | ">>" | placeholder )*
//   placeholder := "<" name ( ("." | "->") member [ "()" ] )* ">"
//   name        := parameter name | "arg" index
//
// "<<" is a literal '<' and ">>" a literal '>' (outside placeholders).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace weavegen {

struct KeyStep {
  bool arrow = false;  // "->" (else ".")
  std::string member;
  bool call = false;   // "()"
  int pos = 0;         // index of the member name in the template text
};

struct KeyPiece {
  bool placeholder = false;
  std::string literal;       // !placeholder
  std::string head;          // placeholder: parameter name or argN
  int head_pos = 0;
  std::vector<KeyStep> steps;
  int pos = 0;               // index of '<'
};

struct KeySyntaxError {
  int pos = 0;  // index into the template text
  int length = 1;
  std::string message;
};

// Parses `text`; on error returns nullopt and fills `err`.
std::optional<std::vector<KeyPiece>> parse_key_template(const std::string& text, KeySyntaxError& err);

}  // namespace weavegen
