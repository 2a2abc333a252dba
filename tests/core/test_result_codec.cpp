// Interceptors that keep results ([[cache]], [[dedupe]]) read and complete a
// call through the method's ResultCodec; MethodInfo written by hand in the
// shape weavegen emits.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>

#include "weave/generated.h"
#include "weave/json_codec.h"

namespace shop {
struct Product {
  std::string id;
  int cents = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Product, id, cents)
}  // namespace shop

namespace {

using weave::AnnotationSpec;

constexpr AnnotationSpec k_keep[] = {{"test_keep", 0, {}, 1, 1}};
constexpr weave::ResultCodec k_codec = weave::detail::make_result_codec<std::optional<shop::Product>>("std::optional<shop::Product>");
constexpr weave::MethodInfo k_info{"shop::Catalog::find", "catalog.h", 3, k_keep, {}, &k_codec};

struct Registered {
  explicit Registered(std::function<void(weave::Invocation&)> f) {
    weave::InterceptorRegistry::global().add("test_keep", std::move(f));
  }
  ~Registered() { weave::InterceptorRegistry::global().remove("test_keep"); }
};

std::optional<shop::Product> find(const std::string& id, int& ran) {
  return weave::detail::invoke<std::optional<shop::Product>>(
      k_info, {}, {},
      [&]() -> std::optional<shop::Product> {
        ++ran;
        if (id.empty()) return std::nullopt;
        return shop::Product{id, 250};
      },
      weave::detail::CannotSkip{});
}

}  // namespace

TEST_CASE("an interceptor reads the result as JSON after proceed") {
  std::string seen;
  bool empty = true;
  Registered r([&](weave::Invocation& inv) {
    REQUIRE(inv.result_codec() == &k_codec);
    REQUIRE(inv.result() == nullptr);
    inv.proceed();
    seen = inv.result_codec()->encode(inv.result());
    empty = inv.result_codec()->empty(inv.result());
  });
  int ran = 0;
  auto p = find("p1", ran);
  REQUIRE(ran == 1);
  REQUIRE(p->cents == 250);
  REQUIRE(nlohmann::json::parse(seen) == nlohmann::json{{"id", "p1"}, {"cents", 250}});
  REQUIRE_FALSE(empty);
  find("", ran);
  REQUIRE(seen == "null");
  REQUIRE(empty);
}

TEST_CASE("an interceptor completes the call from JSON or a shared copy without running the method") {
  const std::optional<shop::Product> original = shop::Product{"p9", 9};
  auto shared = k_codec.share(&original);
  int mode = 0;
  Registered r([&](weave::Invocation& inv) {
    if (mode == 0) inv.complete_from_json(R"({"id":"p7","cents":70})");
    if (mode == 1) inv.complete_from_shared(shared.get());
    REQUIRE(inv.proceeded());
    REQUIRE_THROWS_AS(inv.complete_from_json("null"), weave::UsageError);  // completed twice
    REQUIRE_THROWS_AS(inv.proceed(), weave::UsageError);
  });
  int ran = 0;
  REQUIRE(find("p1", ran)->id == "p7");
  mode = 1;
  REQUIRE(find("p1", ran)->id == "p9");
  REQUIRE(ran == 0);
}

TEST_CASE("JSON of the wrong shape leaves the call to run normally") {
  Registered r([&](weave::Invocation& inv) {
    REQUIRE_THROWS_AS(inv.complete_from_json(R"({"id":7})"), nlohmann::json::exception);
    REQUIRE_FALSE(inv.proceeded());
    inv.proceed();
  });
  int ran = 0;
  REQUIRE(find("p1", ran)->id == "p1");
  REQUIRE(ran == 1);
}

TEST_CASE("a method without a codec cannot be completed by an interceptor") {
  constexpr weave::MethodInfo plain{"shop::Catalog::count", "catalog.h", 4, k_keep, {}};
  Registered r([&](weave::Invocation& inv) {
    REQUIRE(inv.result_codec() == nullptr);
    REQUIRE_THROWS_AS(inv.complete_from_json("1"), weave::UsageError);
    inv.proceed();
    REQUIRE(inv.result() == nullptr);
  });
  REQUIRE(weave::detail::invoke<int>(plain, {}, {}, [] { return 4; }, weave::detail::CannotSkip{}) == 4);
}
