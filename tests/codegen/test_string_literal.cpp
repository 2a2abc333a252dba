// weavegen's string literals (codegen/src/string_literal.h): every escape of
// an ordinary C++ literal read as the compiler reads it, and a written
// literal that reads back as exactly its text, whatever its bytes.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "string_literal.h"

using weavegen::cpp_string_literal;
using weavegen::decode_literal_body;

namespace {

std::string decoded(std::string_view body) {
  std::string text, error;
  std::vector<int> from;
  if (!decode_literal_body(body, text, from, error)) return "(error: " + error + ")";
  REQUIRE(from.size() == text.size());
  return text;
}

std::string error_of(std::string_view body) {
  std::string text, error;
  std::vector<int> from;
  return decode_literal_body(body, text, from, error) ? "(no error)" : error;
}

}  // namespace

TEST_CASE("string literals: every escape reads as the compiler reads it", "[codegen]") {
  CHECK(decoded(R"(a\nb\tc\rd)") == "a\nb\tc\rd");
  CHECK(decoded(R"(\a\b\f\v)") == "\a\b\f\v");
  CHECK(decoded(R"(\"\\\'\?)") == "\"\\'?");
  CHECK(decoded(R"(\x41\x4a\x4A)") == "AJJ");
  CHECK(decoded(R"(\101\0\7\1234)") == std::string("A\0\7S4", 5));  // octal: at most three digits
  CHECK(decoded(R"(caf\u00e9)") == "caf\xC3\xA9");
  CHECK(decoded(R"(\U0001F600)") == "\xF0\x9F\x98\x80");
  CHECK(decoded(R"(\u20AC!)") == "\xE2\x82\xAC!");
  CHECK(decoded("caf\xC3\xA9") == "caf\xC3\xA9");  // UTF-8 in the source passes through
}

TEST_CASE("string literals: each byte knows the character it came from", "[codegen]") {
  std::string text, error;
  std::vector<int> from;
  REQUIRE(decode_literal_body(R"(a\x41\u00e9b)", text, from, error));
  CHECK(from == std::vector<int>{0, 1, 5, 5, 11});
}

TEST_CASE("string literals: a malformed escape is an error that says which", "[codegen]") {
  CHECK(error_of(R"(\q)") == "unknown escape sequence '\\q'");
  CHECK(error_of(R"(\x)") == "'\\x' needs hex digits");
  CHECK_THAT(error_of(R"(\x100)"), Catch::Contains("out of range for a char"));
  CHECK_THAT(error_of(R"(\777)"), Catch::Contains("out of range for a char"));
  CHECK(error_of(R"(\u12)") == "'\\u' needs exactly 4 hex digits");
  CHECK(error_of(R"(\U0011FFFF)") == "'\\U0011FFFF' is not a Unicode character");
  CHECK(error_of(R"(\uD800)") == "'\\uD800' is not a Unicode character");
  CHECK(error_of("ab\\") == "a string literal ends in a lone backslash");
}

TEST_CASE("string literals: what weavegen writes reads back as exactly the text", "[codegen]") {
  auto round_trip = [](const std::string& text) {
    const std::string literal = cpp_string_literal(text);
    REQUIRE(literal.size() >= 2);
    CHECK(literal.find('\n') == std::string::npos);  // one line of generated code
    for (const char c : literal) CHECK((c >= 0x20 && c < 0x7F));
    return decoded(std::string_view(literal).substr(1, literal.size() - 2));
  };
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    INFO(b);
    CHECK(round_trip(one) == one);
    CHECK(round_trip(one + "7") == one + "7");  // an octal escape does not take the digit after it
  }
  std::mt19937 gen(7);
  for (int n = 0; n < 200; ++n) {
    std::string text(gen() % 40, '\0');
    for (char& c : text) c = static_cast<char>(gen() % 256);
    CHECK(round_trip(text) == text);
  }
  CHECK(cpp_string_literal("key:\"<id>\"\n") == R"("key:\"<id>\"\n")");
}
