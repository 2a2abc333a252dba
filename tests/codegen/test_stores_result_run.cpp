// A woven [[cache]] method, generated at build time and compiled with -Werror:
// its MethodInfo carries the ResultCodec weavegen emitted, so an interceptor
// registered under the annotation's name can keep its result as JSON and
// complete later calls from it (the shape the cache and dedupe interceptors use).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog.weave.h"
#include "registered_interceptor.h"
#include "weave/result_codec.h"

TEST_CASE("stores_result: an interceptor named cache encodes a woven method's result through its codec",
          "[codegen][stores_result]") {
  std::vector<std::string> stored;
  std::vector<bool> empty;
  const weave::ResultCodec* codec = nullptr;
  Registered r("cache", [&](weave::Invocation& inv) {
    codec = inv.result_codec();
    inv.proceed();
    if (!codec) return;
    stored.push_back(codec->encode(inv.result()));
    empty.push_back(codec->empty(inv.result()));
  });
  weave::Woven<shop::Catalog> woven;
  shop::Catalog& catalog = woven;
  REQUIRE(catalog.find("p1")->cents == 250);
  REQUIRE(codec != nullptr);
  CHECK(codec->type_name == "std::optional<Product>");
  REQUIRE(stored.size() == 1);
  CHECK(nlohmann::json::parse(stored[0]) == nlohmann::json{{"id", "p1"}, {"cents", 250}});
  CHECK_FALSE(empty[0]);
  CHECK_FALSE(catalog.find("").has_value());
  REQUIRE(stored.size() == 2);
  CHECK(stored[1] == "null");
  CHECK(empty[1]);
  CHECK(woven.loads == 2);
}

TEST_CASE("stores_result: an interceptor completes a woven call from stored JSON without running the method",
          "[codegen][stores_result]") {
  Registered r("cache", [&](weave::Invocation& inv) {
    REQUIRE(inv.result_codec() != nullptr);
    inv.complete_from_json(R"({"id":"from-cache","cents":7})");
  });
  weave::Woven<shop::Catalog> woven;
  const auto p = woven.find("p1");
  REQUIRE(p.has_value());
  CHECK(p->id == "from-cache");
  CHECK(p->cents == 7);
  CHECK(woven.loads == 0);
}

TEST_CASE("stores_result: dedupe has a codec with on_duplicate=replay only", "[codegen][stores_result]") {
  std::vector<std::string> seen;
  Registered r("dedupe", [&](weave::Invocation& inv) {
    const weave::ResultCodec* codec = inv.result_codec();
    seen.push_back(codec ? std::string(codec->type_name) : "none");
    inv.proceed();
    if (codec) seen.push_back(codec->encode(inv.result()));
  });
  weave::Woven<shop::Catalog> woven;
  CHECK(woven.submit("s1").cents == 1);
  CHECK(woven.ping("abc") == 3);
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == "shop::Product");
  CHECK(nlohmann::json::parse(seen[1]) == nlohmann::json{{"id", "s1"}, {"cents", 1}});
  CHECK(seen[2] == "none");
}

TEST_CASE("stores_result: a woven refresh_after method can be detached and re-run later with copies of its "
          "arguments, the others cannot", "[codegen][stores_result]") {
  weave::detail::Detached later;
  bool find_can_detach = true;
  Registered r("cache", [&](weave::Invocation& inv) {
    if (inv.method() == "shop::Catalog::find") {
      find_can_detach = inv.can_detach();
      inv.proceed();
      return;
    }
    REQUIRE(inv.can_detach());
    later = inv.detach();
    inv.complete_from_json(R"({"id":"aged","cents":1})");
  });
  weave::Woven<shop::Catalog> woven;
  {
    std::string id = "p7";
    const auto p = woven.reload(id, 42);
    REQUIRE(p.has_value());
    CHECK(p->id == "aged");
    id = "changed after the call";  // the copy is the call's
  }
  REQUIRE(woven.loads == 0);
  REQUIRE(later);
  std::string json;
  later.run([&](weave::Invocation& inv) {
    CHECK(inv.annotation().name() == "cache");
    CHECK_FALSE(inv.can_detach());
    inv.proceed();
    json = inv.result_codec()->encode(inv.result());
  });
  CHECK(woven.loads == 1);
  CHECK(nlohmann::json::parse(json) == nlohmann::json{{"id", "p7"}, {"cents", 42}});
  woven.find("p1");
  CHECK_FALSE(find_can_detach);
}

TEST_CASE("stores_result: a user's annotation whose argument detaches can re-run a woven call later with copies of "
          "its arguments, as refresh_after can", "[codegen][stores_result]") {
  weave::detail::Detached later;
  Registered r("outbox", [&](weave::Invocation& inv) {
    REQUIRE(inv.can_detach());
    later = inv.detach();
    inv.proceed();
  });
  weave::Woven<shop::Catalog> woven;
  {
    std::string to = "ann";
    woven.notify(to, 1);
    to = "changed after the call";  // the copy is the call's
  }
  REQUIRE(woven.sent == std::vector<std::string>{"ann:1"});
  REQUIRE(later);
  later.run([&](weave::Invocation& inv) {
    CHECK(inv.annotation().name() == "outbox");
    inv.proceed();
  });
  CHECK(woven.sent == std::vector<std::string>{"ann:1", "ann:1"});
}
