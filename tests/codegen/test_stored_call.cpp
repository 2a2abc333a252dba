// weavegen on annotations that keep the call as JSON for a worker to run
// later (vocabulary "stores_call": [[delay]], and a user's [[later]] from
// tests/codegen/vocab/later.json): the diagnostics, and the StoredCallCodec,
// signature and table the generated files get.
#include <catch2/catch.hpp>

#include "weave/generated/stored_call.h"
#include "weavegen_harness.h"

using namespace weavegen_test;

namespace {

const std::string k_orders_prelude =
    "#include <future>\n"                       // 1
    "#include <string>\n"                       // 2
    "#include <string_view>\n"                  // 3
    "namespace shop { struct Item { std::string sku; }; }\n"  // 4
    "struct Orders {\n"                         // 5
    "  virtual ~Orders() = default;\n";         // 6
// The declaration under test is line 7.

// The documented [[delay]] example (docs/queue.md).
const std::string k_documented_example =
    "#include <string>\n"
    "namespace shop {\n"
    "class Orders {\n"
    " public:\n"
    "  virtual ~Orders() = default;\n"
    "  [[delay(queue=\"orders\", after=30min, retries=5, backoff=10s)]]\n"
    "  [[lock(key=\"order:<order_id>\")]]\n"
    "  virtual void cancel_if_unpaid(const std::string& order_id);\n"
    "};\n"
    "}  // namespace shop\n";

// The signature weavegen gives `decl` (a method of struct S), as its generated source spells it.
std::string signature_of(const std::string& name, const std::string& prelude, const std::string& decl) {
  auto r = run(name, prelude + "struct S {\n  virtual ~S() = default;\n" + decl + "\n};\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const std::string cpp = read(r.out_cpp);
  const std::string opening = "constexpr ::weave::StoredCallCodec weave_m0_stored{\n    \"";
  const auto at = cpp.find(opening);
  REQUIRE(at != std::string::npos);
  const auto from = at + opening.size();
  return cpp.substr(from, cpp.find('"', from) - from);
}

}  // namespace

TEST_CASE("stores_call: weavegen accepts the documented [[delay]] example and emits its codec, table and destructor",
          "[codegen][stored_call]") {
  auto r = run("stored_documented_example", k_documented_example);
  expect_woven(r);
  const std::string h = read(r.out_h);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(h, Catch::Contains("~Orders_woven() { ::weave::detail::retire_detached(this); }"));
  CHECK_THAT(h, Catch::Contains("  using weave_proxy = Orders_woven;\n"
                                "  static ::std::span<const ::weave::MethodInfo* const> weave_stored_methods() noexcept;\n"
                                "  static ::std::string weave_encode_m0(::std::span<const ::weave::ArgRef> weave_args);\n"
                                "  ::std::unique_ptr<::weave::detail::DetachedCall> weave_decode_m0(::std::string_view "
                                "weave_json);\n"));
  CHECK_THAT(cpp, Catch::Contains("#include <weave/json_codec.h>\n"));
  CHECK_THAT(cpp, Catch::Contains("constexpr ::weave::StoredCallCodec weave_m0_stored{\n"
                                  "    \"void shop::Orders::cancel_if_unpaid(const std::basic_string<char>&)\",\n"
                                  "    ::weave::signature_hash(\"void shop::Orders::cancel_if_unpaid(const "
                                  "std::basic_string<char>&)\"),\n"
                                  "    /*annotation*/ 0,\n"
                                  "    &::shop::Orders_woven::weave_encode_m0,\n"));
  CHECK_THAT(cpp, Catch::Contains("weave_m0_annotations, weave_m0_params, nullptr, &weave_m0_stored};"));
  CHECK_THAT(cpp, Catch::Contains("{\"queue\", ::weave::ArgValue::of_text(\"orders\")},\n"
                                  "    {\"after\", ::weave::ArgValue::of_duration_ms(1800000)},\n"
                                  "    {\"retries\", ::weave::ArgValue::of_integer(5)},\n"
                                  "    {\"backoff\", ::weave::ArgValue::of_duration_ms(10000)},\n"
                                  "    {\"backoff_cap\", ::weave::ArgValue::of_duration_ms(600000)},\n"));
  // The lock's key is rendered again from the decoded copies, under the annotation's #line.
  CHECK_THAT(cpp, Catch::Contains("  auto& [order_id] = weave_copies;\n  ::std::string weave_rendered[1];\n#line 7 "));
  CHECK_THAT(cpp, Catch::Contains("static constexpr const ::weave::MethodInfo* weave_methods[] = {&::weave_m0_info};"));
}

TEST_CASE("stores_call: defaults fill queue, after, retries and backoff, and the storing annotation's index follows "
          "order",
          "[codegen][stored_call]") {
  auto r = run("stored_defaults",
               "#include <string>\n"
               "namespace shop { struct Orders {\n"
               "  virtual ~Orders() = default;\n"
               "  [[lock(key=\"<id>\", order=1)]] [[delay]] virtual void ship(const std::string& id, int n);\n"
               "}; }\n");
  expect_woven(r);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("{\"queue\", ::weave::ArgValue::of_text(\"shop::Orders::ship\")},\n"
                                  "    {\"after\", ::weave::ArgValue::of_duration_ms(0)},\n"
                                  "    {\"retries\", ::weave::ArgValue::of_integer(3)},\n"
                                  "    {\"backoff\", ::weave::ArgValue::of_duration_ms(1000)},\n"
                                  "    {\"backoff_cap\", ::weave::ArgValue::of_duration_ms(600000)},\n"));
  CHECK_THAT(cpp, Catch::Contains("    /*annotation*/ 0,\n"));  // delay (order 0) runs before lock (order 1)
}

TEST_CASE("diagnostic: what a stored call cannot carry, case by case", "[codegen][stored_call]") {
  struct Case {
    const char* name;
    const char* decl;   // line 7, inside struct Orders
    const char* at;     // the error's column: where this text first appears in `decl`
    const char* error;  // part of the message
  } cases[] = {
      {"returns_value", "  [[delay]] virtual int count(const std::string& id);", "delay",
       "'delay' stores the call of 'Orders::count' to run it later, so its caller gets no result: it must return "
       "void, not 'int'"},
      {"mutable_reference", "  [[delay]] virtual void fill(std::string& out);", "delay",
       "'delay' stores the call of 'Orders::fill' to run it later, but parameter 'out' is 'std::string &', a "
       "non-const reference: writes through it would reach the stored copy, never the caller; pass it by value or "
       "const reference"},
      {"pointer", "  [[delay]] virtual void put(const shop::Item* item);", "delay",
       "'delay' stores the call of 'Orders::put' to run it later, but parameter 'item' is 'const shop::Item *', a "
       "pointer: what it points to is not stored, and the address means nothing when the call runs later, perhaps "
       "in another process; pass the value"},
      {"c_string", "  [[delay]] virtual void note(const char* text);", "delay",
       "parameter 'text' is 'const char *', a pointer"},
      {"string_view", "  [[delay]] virtual void tag(std::string_view label);", "delay",
       "'delay' stores the call of 'Orders::tag' to run it later, but parameter 'label' is 'std::string_view', a "
       "view: what it views may be gone when the call runs; pass an owning type (std::string, std::vector)"},
      {"string_view_reference", "  [[delay]] virtual void tag(const std::string_view& label);", "delay",
       "parameter 'label' is 'const std::string_view', a view"},
      {"rvalue_reference", "  [[delay]] virtual void take(std::string&& text);", "delay",
       "'delay' stores the call of 'Orders::take' to run it later, but parameter 'text' is 'std::string &&', an "
       "rvalue reference: a stored call passes a copy; take it by value or const reference"},
      {"move_only", "  [[delay]] virtual void wait(std::future<int> done);", "delay",
       "'delay' stores the call of 'Orders::wait' to run it later, but parameter 'done' has type "
       "'std::future<int>', which cannot be copied; a stored call keeps copies of its arguments"},
      {"static_method", "  [[delay]] static void sweep(int n);", "delay",
       "'delay' stores the call of 'Orders::sweep' to run it later on the object a worker serves, but it is a "
       "static method, which has none; make it a non-static method"},
      {"two_storing", "  [[delay]] [[later]] virtual void ship(const std::string& id);", "later",
       "'later' stores the call of 'Orders::ship' to run it later, but another of its annotations stores it "
       "already; keep one"},
      {"unknown_argument", "  [[delay(queue=\"q\", delay=5s)]] virtual void ship(const std::string& id);", "delay=",
       "unknown argument 'delay' for annotation 'delay'"},
      {"misspelt_argument", "  [[delay(queu=\"orders\")]] virtual void ship(const std::string& id);", "queu",
       "unknown argument 'queu' for annotation 'delay'; did you mean 'queue'?"},
      {"negative_after", "  [[delay(after=-5s)]] virtual void ship(const std::string& id);", "-5s",
       "duration '-5s' must not be negative"},
      {"negative_retries", "  [[delay(retries=-1)]] virtual void ship(const std::string& id);", "-1",
       "argument 'retries' of 'delay' must be at least 0, not -1"},
      {"backoff_over_cap", "  [[delay(backoff=1h, backoff_cap=1min)]] virtual void ship(const std::string& id);",
       "1h", "'backoff' of 'delay' must be at most 'backoff_cap': backoff=1h is longer than backoff_cap=1min"},
      {"backoff_over_default_cap", "  [[delay(backoff=1h)]] virtual void ship(const std::string& id);", "1h",
       "backoff=1h is longer than backoff_cap=10min (the default)"},
      {"user_annotation_returns_value", "  [[later(lane=\"fast\")]] virtual bool ship(const std::string& id);",
       "later",
       "'later' stores the call of 'Orders::ship' to run it later, so its caller gets no result: it must return "
       "void, not 'bool'"},
      {"user_annotation_pointer", "  [[later]] virtual void put(shop::Item* item);", "later",
       "'later' stores the call of 'Orders::put' to run it later, but parameter 'item' is 'shop::Item *', a "
       "pointer"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      expect_error_in_declaration(std::string("stored_") + c.name, k_orders_prelude, 7, c.decl, c.at, c.error);
    }
  }
}

TEST_CASE("diagnostic: a stored call on a free function, which has no object for a worker to serve",
          "[codegen][stored_call]") {
  auto r = run("stored_free_function", "#include <string>\n"
                                       "namespace shop {\n"
                                       "[[delay]] void sweep(const std::string& region);\n"  // line 3
                                       "}\n");
  expect_error(r, 3, 3,
               "'delay' stores the call of 'shop::sweep' to run it later on the object a worker serves, but it is a "
               "free function, which has none; make it a non-static method");
}

TEST_CASE("stores_call: the signature follows parameter types after aliases, not their spelling or names",
          "[codegen][stored_call]") {
  const std::string prelude = "#include <cstdint>\n#include <string>\n#include <vector>\nusing Id = std::string;\n";
  const std::string as_string = signature_of("sig_string", prelude, "  [[delay]] virtual void f(const std::string& id);");
  CHECK(as_string == "void S::f(const std::basic_string<char>&)");
  CHECK(signature_of("sig_alias", prelude, "  [[delay]] virtual void f(const Id& other_name);") == as_string);
  const std::string as_long = signature_of("sig_long", prelude, "  [[delay]] virtual void f(long id);");
  CHECK(as_long == "void S::f(long)");
  CHECK(signature_of("sig_int64", prelude, "  [[delay]] virtual void f(std::int64_t id);") == as_long);
  CHECK(signature_of("sig_vector", prelude, "  [[later]] virtual void f(std::vector<Id> ids, int n) const;") ==
        "void S::f(std::vector<std::basic_string<char>>, int)");
  // A changed parameter type is a changed hash: a call stored before is refused.
  CHECK(weave::signature_hash(as_string) != weave::signature_hash(as_long));
  CHECK(weave::signature_hash(as_string) == 0x1defcbab67d2402full);
}

TEST_CASE("stores_call: other annotations, and headers without stored calls, generate what they did before",
          "[codegen][stored_call]") {
  auto r = run("stored_none", std::string(k_prelude) +
                                  "namespace s { struct C { [[lock(key=\"k:<i.sku>\")]] virtual int f(const Item& i); "
                                  "[[later]] virtual void g(int n); }; }\n");
  expect_woven(r);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains(", weave_m0_annotations, weave_m0_params};\n"));
  CHECK(cpp.find("weave_m0_stored") == std::string::npos);
  CHECK(cpp.find("weave_encode_m0") == std::string::npos);
  CHECK_THAT(cpp, Catch::Contains(", weave_m1_annotations, weave_m1_params, nullptr, &weave_m1_stored};\n"));
  CHECK_THAT(cpp, Catch::Contains("{&::weave_m1_info};"));
}
