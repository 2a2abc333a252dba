// detail::StoreSchemes::open(): how every feature (the cache's shared tier,
// dedupe's claim store) turns its options into a store: the options' URL as
// given (the loader resolved it), mem:// the feature's own, any other scheme
// its registered factory's, handed the options; add() refuses what could
// never be served.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/feature_runtime.h"
#include "weave/error.h"

namespace {

struct FakeOptions {
  std::string url;
  int pool_size = 1;
};
struct FakeStore {
  std::string made_by, url_or_table;
  int pool_size = 0;
};
using FakeFactory = std::function<std::shared_ptr<FakeStore>(const FakeOptions&)>;

std::shared_ptr<FakeStore> make_mem(std::string_view table) {
  return std::make_shared<FakeStore>(FakeStore{"mem", std::string(table)});
}

}  // namespace

TEST_CASE("StoreSchemes::open: mem:// is the feature's own, another scheme its factory's, the URL as the options give it",
          "[core]") {
  weave::detail::StoreSchemes<FakeFactory> schemes("fake");
  schemes.add("fake", [](const FakeOptions& o) {
    return std::make_shared<FakeStore>(FakeStore{"fake", o.url, o.pool_size});
  });

  auto mem = schemes.open(FakeOptions{.url = "mem://orders"}, make_mem);
  CHECK(mem->made_by == "mem");
  CHECK(mem->url_or_table == "orders");

  auto fake = schemes.open(FakeOptions{.url = "fake://h1", .pool_size = 7}, make_mem);
  CHECK(fake->made_by == "fake");
  CHECK(fake->url_or_table == "fake://h1");
  CHECK(fake->pool_size == 7);  // the other options as given

  // No URL is refused, never looked up: the loader resolves the URL (the
  // environment, the file, the default mem://) before a store is opened.
  REQUIRE_THROWS_AS(schemes.open(FakeOptions{.url = "", .pool_size = 3}, make_mem), weave::ConfigError);

  REQUIRE_THROWS_AS(schemes.open(FakeOptions{.url = "nosuch://x"}, make_mem), weave::ConfigError);
  REQUIRE_THROWS_WITH(schemes.open(FakeOptions{.url = "nosuch://x"}, make_mem),
                      Catch::Contains("fake url 'nosuch://x'") && Catch::Contains("unknown scheme 'nosuch'") &&
                          Catch::Contains("this program serves mem, fake"));
}

TEST_CASE("StoreSchemes::check: a scheme no factory serves fails at configure time, mem:// and a served one pass",
          "[core]") {
  weave::detail::StoreSchemes<FakeFactory> schemes("fake");
  schemes.add("fake", [](const FakeOptions&) { return std::make_shared<FakeStore>(); });
  CHECK_THROWS_AS(schemes.check(""), weave::ConfigError);  // no URL is not a URL
  CHECK_NOTHROW(schemes.check("mem://"));
  CHECK_NOTHROW(schemes.check("fake://h"));
  REQUIRE_THROWS_WITH(schemes.check("nosuch://x"), Catch::Contains("unknown scheme 'nosuch'"));
  // A Redis URL in a program without the Redis libraries says which to link.
  REQUIRE_THROWS_WITH(schemes.check("redis+cluster://h:7000"), Catch::Contains("link Weave::redis"));
}

TEST_CASE("StoreSchemes::add: an empty scheme, a null factory and the built-in mem scheme are refused, naming the feature",
          "[core]") {
  weave::detail::StoreSchemes<FakeFactory> schemes("fake");
  const FakeFactory factory = [](const FakeOptions&) { return std::make_shared<FakeStore>(); };
  REQUIRE_THROWS_AS(schemes.add("", factory), weave::UsageError);
  REQUIRE_THROWS_WITH(schemes.add("", factory), Catch::Contains("fake store") && Catch::Contains("scheme"));
  REQUIRE_THROWS_AS(schemes.add("fake", FakeFactory{}), weave::UsageError);
  REQUIRE_THROWS_WITH(schemes.add("mem", factory), Catch::Contains("fake store") && Catch::Contains("mem://"));
  // None of them was added: their URLs are still refused, mem:// still the feature's own.
  CHECK_THROWS_AS(schemes.check("fake://h"), weave::ConfigError);
  CHECK(schemes.open(FakeOptions{.url = "mem://t"}, make_mem)->made_by == "mem");
}
