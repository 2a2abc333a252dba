// C++ string literals, read and written: what a literal in an annotation
// says (every escape of an ordinary literal, as UTF-8), and the one way
// weavegen writes text into generated code (a literal whose value is
// exactly that text, whatever its bytes).
//
//   std::string text; std::vector<int> from; std::string error;
//   decode_literal_body(R"(caf\u00e9\t\x41)", text, from, error);  // text == "caf\xC3\xA9\tA"
//   cpp_string_literal("a\"b\n");                                 // "\"a\\\"b\\n\""
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weavegen {

// The text the body of a plain or u8 literal (between its quotes) denotes:
// simple escapes (\n \t \" \\ \a \b \f \r \v \' \?), octal (\101), hex
// (\x41), universal names (\u00e9, \U0001F600, written as UTF-8). `from`
// gets, for each byte of `text`, the offset in `body` of the character or
// escape it came from. False with `error` for a malformed escape.
bool decode_literal_body(std::string_view body, std::string& text, std::vector<int>& from, std::string& error);

// A C++ string literal whose value is exactly `text`: printable ASCII as it
// is, \" \\ \n \t \r escaped, every other byte as a three-digit octal escape.
std::string cpp_string_literal(std::string_view text);

}  // namespace weavegen
