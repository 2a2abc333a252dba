// The validator stage alone: key templates checked against a made-up type
// model through TypeQuery, with no libclang and no header to parse.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <utility>
#include <vector>
#include <sstream>

#include "validator.h"

using namespace weavegen;

namespace {

// A tiny type model:  struct Customer { std::string name; };
//   struct Order { std::string id; Customer customer() const; std::string label(int width) const;
//                  protected: int region_; private: int secret_; };
//   plus `Order*` and a type this model knows nothing about (a template parameter).
class FakeTypes final : public TypeQuery {
 public:
  enum : TypeId { unknown = 0, string = 1, customer = 2, order = 3, order_ptr = 4, integer = 5, opaque = 6 };

  std::string written(TypeId t) override { return t == order_ptr ? "Order *" : name(t); }
  std::string name(TypeId t) override {
    static const std::map<TypeId, std::string> names = {{string, "std::string"}, {customer, "Customer"},
                                                       {order, "Order"},        {order_ptr, "Order *"},
                                                       {integer, "int"},        {opaque, "Opaque"}};
    return names.at(t);
  }
  TypeShape shape(TypeId t) override {
    switch (t) {
      case unknown: return TypeShape::unknown;
      case order_ptr: return TypeShape::pointer;
      case customer:
      case order:
      case opaque: return TypeShape::record;
      default: return TypeShape::other;
    }
  }
  ArrowTarget arrow(TypeId t) override {
    if (t == order_ptr) return {ArrowTarget::ok, order};
    return {ArrowTarget::not_pointer, 0};
  }
  MemberLookup members(TypeId record, const std::string& member) override {
    std::map<std::string, MemberInfo> all;
    if (record == customer) all["name"] = {MemberInfo::field, MemberInfo::public_, false, false, string};
    if (record == order) {
      all["id"] = {MemberInfo::field, MemberInfo::public_, false, false, string};
      all["customer"] = {MemberInfo::method, MemberInfo::public_, true, true, customer};
      all["label"] = {MemberInfo::method, MemberInfo::public_, false, true, string};
      all["region_"] = {MemberInfo::field, MemberInfo::protected_, false, false, integer};
      all["secret_"] = {MemberInfo::field, MemberInfo::private_, false, false, integer};
    }
    MemberLookup out;
    for (const auto& [n, m] : all) {
      out.all_names.push_back(n);
      if (n == member) out.found.push_back(m);
    }
    return out;
  }
  bool formattable(TypeId t) override { return t != opaque && t != customer && t != order; }
};

struct Run {
  bool ok = false;
  std::string errors;
  FunctionModel f;
};

// Validates [[<annotation>(<name>="<text>", ...)]] (string arguments) on
// `void m(const Order& order, Order* ptr, T any)`, a method of Order.
Run validate_strings(const std::string& annotation, const std::vector<std::pair<std::string, std::string>>& args,
                     bool decorator = false) {
  static const Vocabulary vocab = [] {
    Vocabulary v;
    std::ostringstream sink;
    Reporter rep(sink);
    v.load(std::string(WEAVE_ANNOTATIONS), rep);
    return v;
  }();
  RawAnnotation raw;
  raw.name = raw.spelled = annotation;
  raw.loc = {1, 3};
  for (const auto& [name, text] : args) {
    RawArg a;
    a.name = name;
    a.loc = {1, 8};
    a.value.kind = RawValue::string;
    a.value.text = text;
    a.value.loc = {1, 12};
    for (std::size_t i = 0; i <= text.size(); ++i) a.value.char_cols.push_back(13 + static_cast<int>(i));
    raw.args.push_back(a);
  }

  Run run;
  run.f.name = "m";
  run.f.qualified_name = "Order::m";
  run.f.member = true;
  run.f.ret = "void";
  run.f.params = {{"order", "const Order&", "", false}, {"ptr", "Order*", "", false}, {"any", "T", "", false}};
  FunctionFacts facts;
  facts.param_types = {FakeTypes::order, FakeTypes::order_ptr, FakeTypes::unknown};
  facts.member = true;
  facts.self = FakeTypes::order;
  facts.protected_visible = !decorator;
  facts.default_key = "Order::m";
  FakeTypes types;
  std::ostringstream out;
  Reporter rep(out);
  ValidatedAnnotation va;
  run.ok = validate_annotation(raw, *vocab.find(annotation), facts, types, run.f, rep, "model.h", va);
  run.errors = out.str();
  return run;
}

// Validates [[lock(key="<text>")]].
Run validate_key(const std::string& text, bool decorator = false) {
  return validate_strings("lock", {{"key", text}}, decorator);
}

// A slot's parts, each placeholder in braces as written (`this` for the object).
std::string rendered(const KeyRender& k) {
  std::string s;
  for (const auto& part : k.parts) {
    if (!part.expr) {
      s += part.text;
      continue;
    }
    s += "{" + (part.access.self ? "this" : part.access.param);
    for (const auto& step : part.access.steps) s += (step.arrow ? "->" : ".") + step.member + (step.call ? "()" : "");
    s += "}";
  }
  return s;
}

std::string rendered(const Run& r) { return rendered(r.f.slots.at(0)); }

}  // namespace

TEST_CASE("validator: placeholders become C++ expressions over parameters and the object", "[codegen][validator]") {
  auto r = validate_key("o:<order.id>:<ptr->customer().name>:<this.region_>:<any.whatever()>");
  INFO(r.errors);
  REQUIRE(r.ok);
  CHECK(rendered(r) == "o:{order.id}:{ptr->customer().name}:{this.region_}:{any.whatever()}");
}

TEST_CASE("validator: each wrong step is reported at its column", "[codegen][validator]") {
  struct Case {
    const char* key;
    const char* error;
  } cases[] = {
      {"<order.idd>", "model.h:1:20: error: no member named 'idd' in 'Order'; did you mean 'id'?"},
      {"<order->id>", "model.h:1:21: error: '->' used on 'Order', which is not a pointer; use '.'"},
      {"<ptr.id>", "model.h:1:18: error: '.' used on pointer type 'Order *'; use '->'"},
      {"<order.label()>", "method 'label' of 'Order' takes arguments"},
      {"<order.customer>", "'customer' is a method of 'Order'; call it as 'customer()'"},
      {"<order.customer()>", "type 'Customer' cannot be used in a key"},
      {"<order.secret_>", "'secret_' is not a public member of 'Order'"},
      {"<this.secret_>", "'secret_' is not an accessible member of 'Order'"},
      {"<this>", "'<this>' names the object itself"},
      {"<orderr>", "unknown parameter 'orderr' in key template; did you mean 'order'?"},
  };
  for (const auto& c : cases) {
    INFO(c.key);
    auto r = validate_key(c.key);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.errors, Catch::Contains(c.error));
  }
}

TEST_CASE("validator: placeholders apart only by text a value may hold are an error", "[codegen][validator]") {
  for (const char* key : {"<order.id><any>", "o:<order.id>-<any>", "<order.id>.x.<any>"}) {
    INFO(key);
    auto r = validate_key(key);
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.errors, Catch::Contains("need one of ':' '/' '|' ',' between them"));
  }
  for (const char* key : {"o:<order.id>:<any>", "<order.id>/<any>", "<order.id>-x|y-<any>", "a-<order.id>-b"}) {
    INFO(key);
    auto r = validate_key(key);
    INFO(r.errors);
    CHECK(r.ok);
  }
}

TEST_CASE("validator: a placeholder in a plain-text argument is an error, not text nobody renders",
          "[codegen][validator]") {
  auto r = validate_strings("dedupe", {{"key", "pay:<order.id>"}, {"message", "order <order.id> paid"}});
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.errors, Catch::Contains("argument 'message' of 'dedupe' is plain text, not a key template"));
  auto literal = validate_strings("dedupe", {{"key", "pay:<order.id>"}, {"message", "paid: 1 < 2 calls"}});
  INFO(literal.errors);
  CHECK(literal.ok);
}

TEST_CASE("validator: a cache's name is a key template rendered per call", "[codegen][validator]") {
  auto r = validate_strings("cache", {{"name", "orders:<order.id>"}, {"key", "<any>"}});
  INFO(r.errors);
  REQUIRE(r.ok);
  REQUIRE(r.f.slots.size() == 2);
  CHECK(r.f.slots.at(0).names_state);  // its values %-encoded: annotations/cache.json
  CHECK(r.f.slots.at(1).names_state);
  CHECK(rendered(r.f.slots.at(0)) == "orders:{order.id}");
}

TEST_CASE("validator: a decorator's keys reach only public members of the object", "[codegen][validator]") {
  auto r = validate_key("<this.region_>", /*decorator=*/true);
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.errors, Catch::Contains("'region_' is protected in 'Order', and the decorator reaches only public members"));
  auto ok = validate_key("<this.id>", /*decorator=*/true);
  INFO(ok.errors);
  REQUIRE(ok.ok);
  CHECK(rendered(ok) == "{this.id}");  // the emitter writes the decorator's target (test_arg_values.cpp)
}

TEST_CASE("vocabulary: the shipped files load with stores_result, at_most, detaches and throwing_values",
          "[codegen][validator]") {
  Vocabulary v;
  std::ostringstream out;
  Reporter rep(out);
  REQUIRE(v.load(WEAVE_ANNOTATIONS, rep));
  INFO(out.str());
  REQUIRE(rep.errors() == 0);
  const AnnotationDef* cache = v.find("cache");
  REQUIRE(cache);
  CHECK(cache->stores_result);
  CHECK(cache->stores_result_arg.empty());
  CHECK(cache->find("local_ttl")->at_most == "ttl");
  CHECK(v.find("cache_put")->stores_result);
  CHECK_FALSE(v.find("cache_evict")->stores_result);
  const AnnotationDef* dedupe = v.find("dedupe");
  REQUIRE(dedupe);
  CHECK(dedupe->stores_result);
  CHECK(dedupe->stores_result_arg == "on_duplicate");
  CHECK(dedupe->stores_result_values == std::vector<std::string>{"replay"});
  CHECK_FALSE(v.find("lock")->stores_result);
  // What weavegen checks and emits by these, not by the annotations' names.
  CHECK(cache->find("refresh_after")->detaches);
  for (const auto* def : {cache, v.find("cache_put"), v.find("cache_evict"), dedupe, v.find("lock")})
    for (const auto& a : def->args) {
      INFO(def->name << "." << a.name);
      CHECK(a.detaches == (def == cache && a.name == "refresh_after"));
    }
  CHECK(v.find("lock")->find("on_busy")->throwing_values ==
        std::map<std::string, std::string>{{"throw", "a busy lock"}});
  CHECK(dedupe->find("on_duplicate")->throwing_values.count("throw"));
  for (const auto* def : {cache, v.find("cache_put"), v.find("cache_evict")})
    CHECK(def->find("on_error")->throwing_values.count("throw"));
  for (const auto* def : {cache, v.find("cache_put"), v.find("cache_evict"), dedupe})
    for (const auto& a : def->args) {
      INFO(def->name << "." << a.name);
      CHECK_FALSE(a.doc.empty());
    }
}

TEST_CASE("vocabulary: scheduled loads its rules, and its retries and backoff are delay's", "[codegen][validator]") {
  Vocabulary v;
  std::ostringstream out;
  Reporter rep(out);
  REQUIRE(v.load(WEAVE_ANNOTATIONS, rep));
  INFO(out.str());
  const AnnotationDef* scheduled = v.find("scheduled");
  const AnnotationDef* delay = v.find("delay");
  REQUIRE(scheduled);
  REQUIRE(delay);
  CHECK(scheduled->runs_on_schedule);
  CHECK(scheduled->requires_one_of == std::vector<std::string>{"cron", "every"});
  CHECK(scheduled->not_yet_at_run_time.empty());
  CHECK(scheduled->stores_call);
  CHECK(scheduled->find("cron")->type == ArgType::cron);
  CHECK(scheduled->find("zone")->type == ArgType::time_zone);
  CHECK(scheduled->find("zone")->only_with_arg == "cron");
  CHECK(scheduled->find("every")->min == 1);
  CHECK(scheduled->find("max_catch_up")->only_with_values == std::vector<std::string>{"run_all"});
  // The format has no reference to another file's default: the same values, checked here.
  for (const char* arg : {"retries", "backoff", "backoff_cap"}) {
    INFO(arg);
    const ArgDef* mine = scheduled->find(arg);
    const ArgDef* theirs = delay->find(arg);
    REQUIRE(mine);
    REQUIRE(theirs);
    CHECK(mine->type == theirs->type);
    CHECK(mine->default_value == theirs->default_value);
    CHECK(mine->min == theirs->min);
    CHECK(mine->at_most == theirs->at_most);
  }
}

TEST_CASE("vocabulary: an annotation's default order is its file's, 0 when it gives none", "[codegen][validator]") {
  Vocabulary v;
  std::ostringstream out;
  Reporter rep(out);
  REQUIRE(v.load(std::string(WEAVE_ANNOTATIONS), rep));
  CHECK(v.find("retry")->order == -50);
  CHECK(v.find("circuit_breaker")->order == -40);
  CHECK(v.find("rate_limit")->order == -30);
  CHECK(v.find("timeout")->order == -20);
  CHECK(v.find("bulkhead")->order == -10);
  CHECK(v.find("lock")->order == 0);
  CHECK(v.find("semaphore")->order == 0);
}

TEST_CASE("vocabulary: malformed stores_result, at_most, detaches, throwing_values, order and warn_inside are invalid vocabularies", "[codegen][validator]") {
  struct Case {
    const char* json;
    const char* error;
  } cases[] = {
      {R"({"name": "x", "stores_result": "yes"})", "\"stores_result\" must be true, false or"},
      {R"({"name": "x", "warn_inside": ["timeout"]})", "\"warn_inside\" must map annotation names to the reason"},
      {R"({"name": "x", "warn_inside": {"timeout": 3}})", "\"warn_inside\": the reason for 'timeout' must be a string"},
      {R"({"name": "x", "stores_result": {"arg": "mode", "values": ["keep"]}})", "'mode' is not an enum argument of 'x'"},
      {R"({"name": "x", "stores_result": {"arg": "mode", "values": ["kept"]},
           "args": [{"name": "mode", "type": "enum", "values": ["keep", "drop"]}]})",
       "'kept' is not a value of 'mode'"},
      {R"({"name": "x", "args": [{"name": "a", "type": "duration", "at_most": "b"}]})",
       "\"at_most\" must name another duration argument, not 'b'"},
      {R"({"name": "x", "args": [{"name": "a", "type": "duration", "at_most": "b"}, {"name": "b", "type": "integer"}]})",
       "\"at_most\" must name another duration argument, not 'b'"},
      {R"({"name": "x", "args": [{"name": "a", "type": "integer", "at_most": "b"}, {"name": "b", "type": "duration"}]})",
       "argument 'a': \"at_most\" needs a duration argument"},
      {R"({"name": "x", "args": [{"name": "a", "type": "duration", "detaches": "yes"}]})",
       "argument 'a': \"detaches\" must be true or false"},
      {R"({"name": "x", "args": [{"name": "a", "type": "enum", "values": ["throw"], "throwing_values": ["throw"]}]})",
       "argument 'a': \"throwing_values\" must map values to what then throws"},
      {R"({"name": "x", "args": [{"name": "a", "type": "string", "throwing_values": {"throw": "a failure"}}]})",
       "argument 'a': \"throwing_values\" needs an enum argument"},
      {R"({"name": "x", "args": [{"name": "a", "type": "enum", "values": ["fail"], "throwing_values": {"throw": "x"}}]})",
       "argument 'a': \"throwing_values\": 'throw' is not one of its values"},
      {R"({"name": "x", "args": [{"name": "a", "type": "enum", "values": ["throw"], "throwing_values": {"throw": ""}}]})",
       "argument 'a': \"throwing_values\": 'throw' needs the text of what then throws"},
      {R"({"name": "x", "order": "outer"})", "\"order\" must be an integer"},
  };
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("weavegen_vocab_" + std::to_string(::getpid()) + ".json")).string();
  for (const auto& c : cases) {
    INFO(c.json);
    std::ofstream(path) << c.json;
    Vocabulary v;
    std::ostringstream out;
    Reporter rep(out);
    CHECK_FALSE(v.load(path, rep));
    CHECK_THAT(out.str(), Catch::Contains("invalid annotation vocabulary: ") && Catch::Contains(c.error));
  }
  std::filesystem::remove(path);
}
