// weavegen on annotations that keep the method's result as JSON (vocabulary
// "stores_result": [[cache]], [[cache_put]], [[dedupe(on_duplicate=replay)]])
// and on durations bounded by another ("at_most": local_ttl <= ttl): the
// diagnostics, and the ResultCodec the generated source gets.
#include <catch2/catch.hpp>

#include "weavegen_harness.h"

using namespace weavegen_test;

namespace {

const std::string k_catalog_prelude =
    "#include <future>\n"                                                    // 1
    "#include <optional>\n"                                                  // 2
    "#include <string>\n"                                                    // 3
    "namespace shop { struct Product { std::string id; int cents = 0; }; }\n"  // 4
    "struct Catalog {\n"                                                     // 5
    "  virtual ~Catalog() = default;\n";                                     // 6
// The declaration under test is line 7.

}  // namespace

TEST_CASE("diagnostic: results kept as JSON and durations bounded by another, case by case",
          "[codegen][stores_result]") {
  struct Case {
    const char* name;
    const char* decl;   // line 7, inside struct Catalog
    const char* at;     // the error's column: where this text first appears in `decl`
    const char* error;  // part of the message
  } cases[] = {
      {"cache_void", "  [[cache(key=\"<id>\")]] virtual void touch(const std::string& id);", "cache",
       "'cache' stores the result of 'Catalog::touch' as JSON, but it returns void: there is no result to store"},
      {"cache_reference", "  [[cache(key=\"<id>\")]] virtual const shop::Product& get(const std::string& id);",
       "cache",
       "'cache' stores the result of 'Catalog::get' as JSON, but it returns 'const shop::Product &', a reference: "
       "a stored copy cannot be returned as a reference to the original; return it by value"},
      {"cache_future", "  [[cache(key=\"<id>\")]] virtual std::future<shop::Product> load(const std::string& id);",
       "cache",
       "'cache' stores the result of 'Catalog::load' as JSON when the call returns, but it returns "
       "'std::future<shop::Product>', whose value may still be computed after that (a std::future is ready "
       "later)"},
      {"cache_put_void", "  [[cache_put(name=\"product\", key=\"<id>\")]] virtual void save(const std::string& id);",
       "cache_put", "'cache_put' stores the result of 'Catalog::save' as JSON, but it returns void"},
      {"dedupe_replay_void",
       "  [[dedupe(key=\"<id>\", on_duplicate=replay)]] virtual void submit(const std::string& id);", "replay",
       "'dedupe' with on_duplicate=replay stores the result of 'Catalog::submit' as JSON, but it returns void"},
      {"dedupe_replay_reference",
       "  [[dedupe(on_duplicate=replay)]] virtual shop::Product&& take(const std::string& id);", "replay",
       "'dedupe' with on_duplicate=replay stores the result of 'Catalog::take' as JSON, but it returns "
       "'shop::Product &&', a reference"},
      {"local_ttl_over_ttl",
       "  [[cache(key=\"<id>\", ttl=30min, local_ttl=1h)]] virtual std::optional<shop::Product> find(const std::string& id);",
       "1h", "'local_ttl' of 'cache' must be at most 'ttl': local_ttl=1h is longer than ttl=30min"},
      {"local_ttl_over_default_ttl",
       "  [[cache(key=\"<id>\", local_ttl=1h)]] virtual std::optional<shop::Product> find(const std::string& id);",
       "1h", "'local_ttl' of 'cache' must be at most 'ttl': local_ttl=1h is longer than ttl=30min (the default)"},
      {"default_local_ttl_over_ttl",
       "  [[cache_put(name=\"product\", ttl=1min)]] virtual shop::Product save(const std::string& id);", "1min",
       "'local_ttl' of 'cache_put' must be at most 'ttl': local_ttl=5min (the default) is longer than ttl=1min"},
      {"refresh_after_over_ttl",
       "  [[cache(key=\"<id>\", ttl=1min, refresh_after=5min)]] virtual std::optional<shop::Product> find(const std::string& id);",
       "5min", "'refresh_after' of 'cache' must be at most 'ttl': refresh_after=5min is longer than ttl=1min"},
      {"refresh_after_move_only_param",
       "  [[cache(key=\"<id>\", refresh_after=1min)]] virtual std::optional<shop::Product> find(const std::string& id, "
       "std::future<int> hint);",
       "1min",
       "'refresh_after' of 'cache' runs 'Catalog::find' again in the background with copies of its arguments, but "
       "parameter 'hint' has type 'std::future<int>', which cannot be copied; pass a copyable type (a value, or "
       "std::shared_ptr), or drop refresh_after"},
      {"evict_key_and_all",
       "  [[cache_evict(name=\"product\", key=\"<id>\", all=true)]] virtual void remove(const std::string& id);",
       "all", "'all' cannot be combined with 'key'"},
      {"evict_all_and_key",
       "  [[cache_evict(name=\"product\", all=true, key=\"<id>\")]] virtual void remove(const std::string& id);",
       "key", "'key' cannot be combined with 'all'"},
      {"unknown_tier",
       "  [[cache(tier=shared)]] virtual std::optional<shop::Product> find(const std::string& id);", "shared",
       "invalid value 'shared' for argument 'tier' of 'cache'; expected one of: both, local, remote"},
      {"cache_put_without_name", "  [[cache_put(key=\"<id>\")]] virtual shop::Product save(const std::string& id);",
       "cache_put", "annotation 'cache_put' requires argument 'name'"},
      {"dedupe_skip_on_value", "  [[dedupe(on_duplicate=skip)]] virtual int count(const std::string& id);", "skip",
       "on_duplicate=skip needs a method that returns void or std::optional<T> (or a fallback)"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      expect_error_in_declaration(std::string("stores_") + c.name, k_catalog_prelude, 7, c.decl, c.at, c.error);
    }
  }
}

TEST_CASE("stores_result: only where it applies, and other annotations are untouched", "[codegen][stores_result]") {
  struct Case {
    const char* name;
    const char* decl;
  } cases[] = {
      {"dedupe_throw_void", "  [[dedupe(key=\"<id>\", on_duplicate=throw)]] virtual void submit(const std::string& id);"},
      {"dedupe_default_void", "  [[dedupe(window=10s, message=\"already sent\")]] virtual void submit(const std::string& id);"},
      {"dedupe_skip_void", "  [[dedupe(on_duplicate=skip, wait=2s)]] virtual void submit(const std::string& id);"},
      {"evict_void", "  [[cache_evict(name=\"product\", key=\"<id>\", before=true)]] virtual void remove(const std::string& id);"},
      {"evict_all", "  [[cache_evict(name=\"product\", all=true, tier=local)]] virtual void clear(const std::string& id);"},
      {"lock_reference", "  [[lock(key=\"<id>\")]] virtual const shop::Product& get(const std::string& id);"},
      {"dedupe_and_lock_int", "  [[dedupe(key=\"<id>\")]] [[lock]] virtual int count(const std::string& id);"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto r = run(std::string("plain_") + c.name, k_catalog_prelude + c.decl + "\n};\n");
      expect_woven(r);
      const std::string cpp = read(r.out_cpp);
      CHECK(cpp.find("ResultCodec") == std::string::npos);
      CHECK(cpp.find("json_codec") == std::string::npos);
    }
  }
}

TEST_CASE("stores_result: a woven cache gets a ResultCodec over the return type, qualified at namespace scope",
          "[codegen][stores_result]") {
  auto r = run("stores_woven",
               "#include <memory>\n"
               "#include <optional>\n"
               "#include <string>\n"
               "#include <nlohmann/json.hpp>\n"
               "namespace shop {\n"
               "struct Product { std::string id; int cents = 0; };\n"
               "NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Product, id, cents)\n"
               "class Catalog {\n"
               " public:\n"
               "  virtual ~Catalog() = default;\n"
               "  [[cache(name=\"product\", key=\"<id>\", ttl=30min, local_ttl=30min)]]\n"
               "  virtual std::optional<Product> find(const std::string& id);\n"
               "  [[cache_put(name=\"product\", key=\"<p.id>\")]] virtual Product save(const Product& p);\n"
               "  [[cache_evict(name=\"product\", key=\"<id>\")]] virtual void remove(const std::string& id);\n"
               "  [[dedupe(key=\"<id>\", on_duplicate=replay, window=1h)]] virtual std::shared_ptr<const Product> "
               "claim(const std::string& id);\n"
               "  [[lock(key=\"<id>\")]] virtual int count(const std::string& id);\n"
               "  struct Shelf { int n = 0; };\n"
               "};\n"
               "NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Catalog::Shelf, n)\n"
               "struct Outer {\n"
               "  struct Inner {\n"
               "    virtual ~Inner() = default;\n"
               "    [[cache]] virtual Catalog::Shelf shelf();\n"
               "  };\n"
               "};\n"
               "struct Api {\n"
               "  virtual ~Api() = default;\n"
               "  [[cache(key=\"<id>\")]] virtual std::optional<Product> get(const std::string& id) = 0;\n"
               "};\n"
               "[[cache]] std::string greeting();\n"
               "}  // namespace shop\n");
  expect_woven(r);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("#include <weave/json_codec.h>\n"));
  // find: declared as std::optional<Product> inside namespace shop.
  CHECK_THAT(cpp, Catch::Contains("constexpr ::weave::ResultCodec weave_m0_codec = "
                                  "::weave::detail::make_result_codec<std::optional<shop::Product>>("
                                  "\"std::optional<Product>\");\n"));
  CHECK_THAT(cpp, Catch::Contains("weave_m0_annotations, weave_m0_params, &weave_m0_codec};"));
  CHECK_THAT(cpp, Catch::Contains("make_result_codec<shop::Product>(\"shop::Product\")"));
  CHECK_THAT(cpp, Catch::Contains("make_result_codec<std::shared_ptr<const shop::Product>>("));
  CHECK_THAT(cpp, Catch::Contains("make_result_codec<shop::Catalog::Shelf>("));
  CHECK_THAT(cpp, Catch::Contains("make_result_codec<std::optional<shop::Product>>(\"std::optional<Product>\");\n"
                                  "constexpr ::weave::MethodInfo weave_m6_info"));  // the decorator's method
  // remove (cache_evict) and count (lock) keep no result.
  CHECK_THAT(cpp, Catch::Contains("weave_m2_annotations, weave_m2_params};"));
  CHECK_THAT(cpp, Catch::Contains("weave_m4_annotations, weave_m4_params};"));
  CHECK(cpp.find("weave_m2_codec") == std::string::npos);
  CHECK(cpp.find("weave_m4_codec") == std::string::npos);
  // The header needs nothing of JSON.
  CHECK(read(r.out_h).find("json") == std::string::npos);
}

TEST_CASE("stores_result: a lock-only header generates what it did before codecs existed", "[codegen][stores_result]") {
  auto r = run("stores_none", std::string(k_prelude) +
                                  "namespace s { struct C { [[lock(key=\"k:<i.sku>\")]] virtual int f(const Item& i); }; }\n");
  expect_woven(r);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("#include <utility>\n\nnamespace {\n\n// s::C::f\n"));
  CHECK_THAT(cpp, Catch::Contains("constexpr ::weave::MethodInfo weave_m0_info{\"s::C::f\", "));
  CHECK_THAT(cpp, Catch::Contains(", weave_m0_annotations, weave_m0_params};\n\n}  // namespace\n"));
  CHECK(cpp.find("codec") == std::string::npos);
}
