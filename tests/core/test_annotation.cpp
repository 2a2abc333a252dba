// Annotation::choice: how a built-in (or user) interceptor reads an enum
// argument, from weavegen's index or, for specs written by hand, by text.
#include <catch2/catch.hpp>

#include "weave/annotation.h"
#include "weave/error.h"

using weave::ArgSpec;
using weave::ArgValue;

TEST_CASE("Annotation::choice reads weavegen's index, or the text of a spec written by hand") {
  static constexpr ArgSpec args[] = {{"tier", ArgValue::of_enum("remote", 2)},
                              {"mode", ArgValue::of_enum("slow")},
                              {"bad", ArgValue::of_enum("sideways")}};
  static constexpr weave::AnnotationSpec spec{"cache", 0, args, 1, 1};
  const weave::Annotation a(spec, {});
  REQUIRE(a.choice("tier", {"both", "local", "remote"}) == 2);
  REQUIRE(a.choice("mode", {"fast", "slow"}) == 1);
  REQUIRE_THROWS_AS(a.choice("bad", {"up", "down"}, "shop::Catalog::find"), weave::UsageError);
  REQUIRE_THROWS_WITH(a.choice("bad", {"up", "down"}, "shop::Catalog::find"),
                      "weave: cache bad='sideways' is not one of up, down (cache on shop::Catalog::find)");
}
