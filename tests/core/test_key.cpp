// Key formatting: every supported kind of value, and the user hooks.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "weave/key.h"

namespace app {
struct Money {
  long cents;
};
std::string weave_key(const Money& m) { return std::to_string(m.cents) + "c"; }

struct Point {
  int x, y;
};
std::ostream& operator<<(std::ostream& os, const Point& p) { return os << p.x << ',' << p.y; }

enum class Color { red = 3 };
struct Opaque {};
}  // namespace app

template <class T>
std::string key_of(const T& v) {
  std::string out;
  weave::append_key(out, v);
  return out;
}

TEST_CASE("key values format as text") {
  CHECK(key_of(42) == "42");
  CHECK(key_of(-7L) == "-7");
  CHECK(key_of(2.5) == "2.5");
  CHECK(key_of(true) == "true");
  CHECK(key_of(std::string("abc")) == "abc");
  CHECK(key_of(std::string_view("sv")) == "sv");
  CHECK(key_of("lit") == "lit");
  CHECK(key_of(app::Color::red) == "3");
  CHECK(key_of(app::Money{125}) == "125c");   // ADL hook
  CHECK(key_of(app::Point{1, 2}) == "1,2");   // operator<<
}

TEST_CASE("the formattable trait matches what weavegen accepts") {
  STATIC_REQUIRE(weave::is_key_formattable_v<int>);
  STATIC_REQUIRE(weave::is_key_formattable_v<std::string>);
  STATIC_REQUIRE(weave::is_key_formattable_v<app::Money>);
  STATIC_REQUIRE(weave::is_key_formattable_v<app::Point>);
  STATIC_REQUIRE_FALSE(weave::is_key_formattable_v<app::Opaque>);
}
