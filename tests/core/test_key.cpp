// Key formatting: every supported kind of value, the user hooks, and the
// encoding that keeps rendered keys apart.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>

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
  CHECK(key_of(app::Point{1, 2}) == "1%2C2");  // operator<<, its ',' encoded
}

TEST_CASE("key values: reserved characters are %-encoded, everything else renders as it is") {
  CHECK(key_of(std::string("a:b")) == "a%3Ab");
  CHECK(key_of(std::string("{tag}")) == "%7Btag%7D");
  CHECK(key_of(std::string("100%")) == "100%25");
  CHECK(key_of(std::string("a/b|c,d")) == "a%2Fb%7Cc%2Cd");
  CHECK(key_of(std::string("ada@example.com")) == "ada@example.com");
  CHECK(key_of(std::string("3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f")) == "3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f");
  CHECK(key_of(std::string("caf\xc3\xa9 \x01")) == "caf\xc3\xa9 \x01");
}

TEST_CASE("key values: a template that names no stored state renders values as they are") {
  std::string out;
  weave::append_text(out, std::string("a:b{c}"));
  weave::append_text(out, app::Point{1, 2});
  weave::append_text(out, 7);
  CHECK(out == "a:b{c}1,27");
}

// "p:<a>:<b>" rendered for every pair of values drawn from an alphabet
// rich in reserved characters: distinct pairs never give one key.
TEST_CASE("key values: a template with separated placeholders renders distinct arguments as distinct keys") {
  std::mt19937 rng(12345);
  const std::string alphabet = "ab:%{}/|,3-A";
  auto value = [&] {
    std::string v;
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) v += alphabet[rng() % alphabet.size()];
    return v;
  };
  std::map<std::string, std::pair<std::string, std::string>> seen;
  for (int i = 0; i < 20000; ++i) {
    const std::string a = value(), b = value();
    std::string key = "p:";
    weave::append_key(key, a);
    key += ':';
    weave::append_key(key, b);
    const auto [it, fresh] = seen.emplace(key, std::make_pair(a, b));
    INFO(key);
    CHECK((fresh || it->second == std::make_pair(a, b)));
  }
  CHECK(seen.size() > 5000);
}

TEST_CASE("the formattable trait matches what weavegen accepts") {
  STATIC_REQUIRE(weave::is_key_formattable_v<int>);
  STATIC_REQUIRE(weave::is_key_formattable_v<std::string>);
  STATIC_REQUIRE(weave::is_key_formattable_v<app::Money>);
  STATIC_REQUIRE(weave::is_key_formattable_v<app::Point>);
  STATIC_REQUIRE_FALSE(weave::is_key_formattable_v<app::Opaque>);
}
