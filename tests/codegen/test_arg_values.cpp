// An annotation's arguments and key placeholders from the validator to the
// emitter: the validator hands over typed values (model.h), written or
// default alike, and only the emitter writes them as C++.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emitter.h"
#include "validator.h"

using namespace weavegen;

namespace {

// Every argument type, some with defaults.
const char* const k_every = R"({"name": "every", "args": [
  {"name": "key", "type": "template"},
  {"name": "keys", "type": "template_list"},
  {"name": "ttl", "type": "duration", "forever": true},
  {"name": "wait", "type": "duration", "default": "250ms"},
  {"name": "retries", "type": "integer", "min": -1, "default": 3},
  {"name": "sync", "type": "bool"},
  {"name": "strict", "type": "bool", "default": true},
  {"name": "mode", "type": "enum", "values": ["fast", "safe"], "default": "safe"},
  {"name": "level", "type": "enum", "values": ["info", "warn", "error"]},
  {"name": "label", "type": "string"},
  {"name": "then", "type": "identifier"},
  {"name": "name", "type": "string", "default_qualified_name": true}]})";

// Knows no type: placeholders are left to the C++ compiler.
class NoTypes final : public TypeQuery {
 public:
  std::string written(TypeId) override { return "T"; }
  std::string name(TypeId) override { return "T"; }
  TypeShape shape(TypeId) override { return TypeShape::unknown; }
  ArrowTarget arrow(TypeId) override { return {}; }
  MemberLookup members(TypeId, const std::string&) override { return {}; }
  bool formattable(TypeId) override { return true; }
};

RawValue value(RawValue::Kind kind, std::string text) {
  RawValue v;
  v.kind = kind;
  v.text = std::move(text);
  v.loc = {1, 12};
  return v;
}

RawValue list(std::vector<RawValue> items) {
  RawValue v = value(RawValue::list, "");
  v.items = std::move(items);
  return v;
}

struct Run {
  bool ok = false;
  std::string errors;
  std::vector<ArgModel> args;
  std::vector<KeyRender> slots;
};

// Validates [[<name>(args...)]] on `void m(const Order& order, int n)`, a
// method of Order, against the vocabulary `json`.
Run validate(const std::string& json, const std::vector<std::pair<std::string, RawValue>>& args) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("weavegen_arg_values_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(path) << json;
  Vocabulary vocab;
  std::ostringstream out;
  Reporter rep(out);
  const bool loaded = vocab.load(path, rep);
  std::filesystem::remove(path);
  REQUIRE(loaded);
  const AnnotationDef& def = *vocab.find(vocab.names().front());

  RawAnnotation raw;
  raw.name = raw.spelled = def.name;
  raw.loc = {1, 3};
  for (const auto& [name, v] : args) {
    RawArg a;
    a.name = name;
    a.loc = {1, 8};
    a.value = v;
    raw.args.push_back(a);
  }
  FunctionModel f;
  f.name = "m";
  f.qualified_name = "Order::m";
  f.member = true;
  f.ret = "void";
  f.params = {{"order", "const Order&", "", false}, {"n", "int", "", false}};
  FunctionFacts facts;
  facts.param_types = {0, 0};
  facts.member = true;
  facts.default_key = "Order::m";
  // The types this translation unit "declares", as weavegen would find them
  // from Order::m's scope.
  facts.resolve_type = [](const std::string& name) -> std::string {
    if (name == "std::system_error" || name == "::std::system_error") return "::std::system_error";
    if (name == "Transient" || name == "pay::Transient") return "::pay::Transient";
    return "";
  };
  NoTypes types;
  ValidatedAnnotation va;
  Run run;
  run.ok = validate_annotation(raw, def, facts, types, f, rep, "model.h", va);
  run.errors = out.str();
  run.args = va.model.args;
  run.slots = f.slots;
  return run;
}

const ArgValue* find(const Run& r, const std::string& name) {
  for (const auto& a : r.args)
    if (a.name == name) return &a.value;
  return nullptr;
}

}  // namespace

TEST_CASE("arg values: the validator hands each kind over typed, written or by default", "[codegen][validator]") {
  const Run r = validate(k_every, {{"key", value(RawValue::string, "o:<order.id>")},
                                   {"keys", list({value(RawValue::string, "a:<n>"), value(RawValue::string, "b")})},
                                   {"ttl", value(RawValue::identifier, "forever")},
                                   {"retries", value(RawValue::number, "-1")},
                                   {"sync", value(RawValue::boolean, "false")},
                                   {"level", value(RawValue::identifier, "error")},
                                   {"label", value(RawValue::string, "say \"hi\"")},
                                   {"then", value(RawValue::identifier, "retry_later")}});
  INFO(r.errors);
  REQUIRE(r.ok);
  const std::vector<ArgModel> expected = {
      {"key", arg::Template{0, "o:<order.id>"}},
      {"keys", arg::TemplateList{1, 2, "a:<n>,b"}},
      {"ttl", arg::Forever{}},
      {"wait", arg::DurationMs{250}},        // default "250ms"
      {"retries", arg::Integer{-1}},
      {"sync", arg::Bool{false}},
      {"strict", arg::Bool{true}},           // default true
      {"mode", arg::Enum{"safe", 1}},        // default, second of its values
      {"level", arg::Enum{"error", 2}},
      {"label", arg::Text{"say \"hi\""}},
      {"then", arg::Text{"retry_later"}},
      {"name", arg::Text{"Order::m"}},       // default_qualified_name
  };
  REQUIRE(r.args.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO(expected[i].name << ": got " << r.args[i].name << " = " << arg_value_code(r.args[i].value));
    CHECK(r.args[i] == expected[i]);
  }
  // The slots the templates name, in order.
  REQUIRE(r.slots.size() == 3);
  CHECK(r.slots[0].parts.back().access == KeyAccess{false, "order", {{"id", false, false}}});
  CHECK(r.slots[1].parts.back().access == KeyAccess{false, "n", {}});
  CHECK(r.slots[2].parts.back().text == "b");
}

TEST_CASE("arg values: a written duration is in milliseconds, a single string is a list of one template",
          "[codegen][validator]") {
  const Run r = validate(k_every, {{"ttl", value(RawValue::number, "2min")}, {"keys", value(RawValue::string, "k:<n>")}});
  INFO(r.errors);
  REQUIRE(r.ok);
  REQUIRE(find(r, "ttl"));
  CHECK(*find(r, "ttl") == ArgValue{arg::DurationMs{120000}});
  REQUIRE(find(r, "keys"));
  CHECK(*find(r, "keys") == ArgValue{arg::TemplateList{0, 1, "k:<n>"}});
}

TEST_CASE("arg values: a rate is permits per period in milliseconds, a unit alone counting one of it",
          "[codegen][validator]") {
  const char* const vocab = R"({"name": "limit", "args": [{"name": "rate", "type": "rate"}]})";
  const std::pair<const char*, arg::Rate> good[] = {
      {"100/s", {100, 1000}}, {"6000/min", {6000, 60000}}, {"10/h", {10, 3600000}},
      {"5/10s", {5, 10000}},  {"1/250ms", {1, 250}},       {"123456789012345678/h", {123456789012345678, 3600000}}};
  for (const auto& [text, rate] : good) {
    INFO(text);
    const Run r = validate(vocab, {{"rate", value(RawValue::number, text)}});
    INFO(r.errors);
    REQUIRE(r.ok);
    CHECK(*find(r, "rate") == ArgValue{rate});
  }
  const std::pair<RawValue, const char*> bad[] = {
      {value(RawValue::number, "100"), "rate '100' names no unit"},
      {value(RawValue::number, "0/s"), "rate '0/s' admits nothing"},
      {value(RawValue::number, "-5/s"), "'-5' is not a whole number of permits"},
      {value(RawValue::number, "1.5/s"), "'1.5' is not a whole number of permits"},
      {value(RawValue::number, "1234567890123456789/s"), "too many"},
      {value(RawValue::number, "10/sec"), "unknown duration unit 'sec'"},
      {value(RawValue::number, "10/0s"), "the period must be at least 1ms"},
      {value(RawValue::number, "10/99999h"), "too long"},
      {value(RawValue::string, "100/s"), "argument 'rate' of 'limit' expects a rate (e.g. 100/s, 6000/min, 10/h), not a string"},
  };
  for (const auto& [v, error] : bad) {
    INFO(v.text);
    const Run r = validate(vocab, {{"rate", v}});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.errors, Catch::Contains(error));
  }
}

TEST_CASE("arg values: a percentage is a whole number from 1% to 100%, read as an integer", "[codegen][validator]") {
  const char* const vocab = R"({"name": "breaker", "args": [{"name": "rate", "type": "percent", "default": "50%"}]})";
  for (const auto& [text, n] : {std::pair{"1%", 1}, {"50%", 50}, {"100%", 100}}) {
    INFO(text);
    const Run r = validate(vocab, {{"rate", value(RawValue::number, text)}});
    INFO(r.errors);
    REQUIRE(r.ok);
    CHECK(*find(r, "rate") == ArgValue{arg::Integer{n}});
  }
  const Run defaulted = validate(vocab, {});
  REQUIRE(defaulted.ok);
  CHECK(*find(defaulted, "rate") == ArgValue{arg::Integer{50}});
  const std::pair<RawValue, const char*> bad[] = {
      {value(RawValue::number, "0%"), "must be a whole percentage from 1% to 100%, not 0%"},
      {value(RawValue::number, "101%"), "not 101%"},
      {value(RawValue::number, "2.5%"), "not 2.5%"},
      {value(RawValue::number, "50"), "expects a percentage (e.g. 50%)"},
      {value(RawValue::string, "50%"), "expects a percentage (e.g. 50%), not a string"},
  };
  for (const auto& [v, error] : bad) {
    INFO(v.text);
    const Run r = validate(vocab, {{"rate", v}});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.errors, Catch::Contains(error));
  }
}

TEST_CASE("arg values: exception types are one type or a list, each named as weavegen resolved it",
          "[codegen][validator]") {
  const char* const vocab = R"({"name": "retry", "args": [{"name": "retry_on", "type": "exception_types"}]})";
  const Run one = validate(vocab, {{"retry_on", value(RawValue::identifier, "Transient")}});
  INFO(one.errors);
  REQUIRE(one.ok);
  CHECK(*find(one, "retry_on") == ArgValue{arg::ExceptionTypes{{"::pay::Transient"}, "Transient"}});
  const Run two = validate(vocab, {{"retry_on", list({value(RawValue::identifier, "std::system_error"),
                                                      value(RawValue::identifier, "pay::Transient")})}});
  INFO(two.errors);
  REQUIRE(two.ok);
  CHECK(*find(two, "retry_on") == ArgValue{arg::ExceptionTypes{{"::std::system_error", "::pay::Transient"},
                                                                "std::system_error, pay::Transient"}});
  const std::pair<RawValue, const char*> bad[] = {
      {value(RawValue::identifier, "pay::Permanent"),
       "argument 'retry_on' of 'retry': 'pay::Permanent' does not name a type declared before 'Order::m'"},
      {list({}), "argument 'retry_on' of 'retry' names no exception type"},
      {value(RawValue::string, "std::system_error"), "expects exception types (e.g. [std::system_error, pay::Transient]), not a string"},
  };
  for (const auto& [v, error] : bad) {
    INFO(v.text);
    const Run r = validate(vocab, {{"retry_on", v}});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.errors, Catch::Contains(error));
  }
}

TEST_CASE("arg values: a default the vocabulary gets wrong is refused as a written value would be, not dropped",
          "[codegen][validator]") {
  struct Case {
    const char* arg;
    const char* error;
  } cases[] = {
      {R"({"name": "d", "type": "duration", "default": "soon"})", "expected a duration such as 30s"},
      {R"({"name": "d", "type": "duration", "default": "5parsecs"})", "unknown duration unit 'parsecs'"},
      {R"({"name": "d", "type": "duration", "default": "forever"})", "argument 'd' of 'bad' does not accept 'forever'"},
      {R"({"name": "d", "type": "enum", "values": ["a", "b"], "default": "c"})", "invalid value 'c' for argument 'd'"},
      {R"({"name": "d", "type": "integer", "default": "3"})", "argument 'd' of 'bad' expects an integer, not an identifier"},
      {R"({"name": "d", "type": "string", "default": "id <n>"})", "is plain text, not a key template"},
      {R"({"name": "d", "type": "template_list", "default": []})", "argument 'd' needs at least one key template"},
  };
  for (const auto& c : cases) {
    INFO(c.arg);
    const Run r = validate(std::string(R"({"name": "bad", "args": [)") + c.arg + "]}", {});
    CHECK_FALSE(r.ok);
    CHECK_THAT(r.errors, Catch::Contains(c.error));
    CHECK_THAT(r.errors, Catch::Contains("note: 'd' of 'bad' is not written: its default"));
    CHECK(r.args.empty());
  }
}

TEST_CASE("arg values: the emitter writes each kind as the weave::ArgValue of that kind", "[codegen][emitter]") {
  const std::pair<ArgValue, const char*> cases[] = {
      {arg::Forever{}, "::weave::ArgValue::of_forever()"},
      {arg::DurationMs{30000}, "::weave::ArgValue::of_duration_ms(30000)"},
      {arg::Integer{-1}, "::weave::ArgValue::of_integer(-1)"},
      {arg::Bool{true}, "::weave::ArgValue::of_bool(true)"},
      {arg::Bool{false}, "::weave::ArgValue::of_bool(false)"},
      {arg::Text{"a\"b\\c\n"}, R"(::weave::ArgValue::of_text("a\"b\\c\n"))"},
      {arg::Enum{"on_return", 0}, R"(::weave::ArgValue::of_enum("on_return", 0))"},
      {arg::Template{3, "o:<order.id>"}, R"(::weave::ArgValue::of_template(3, "o:<order.id>"))"},
      {arg::TemplateList{1, 2, "a:<x>,b:<y>"}, R"(::weave::ArgValue::of_template_list(1, 2, "a:<x>,b:<y>"))"},
      {arg::ExceptionTypes{{"::std::system_error", "::pay::Transient"}, "std::system_error, pay::Transient"},
       R"(::weave::ArgValue::of_exception_types(&::weave::error_is<::std::system_error, ::pay::Transient>, "std::system_error, pay::Transient"))"},
      {arg::Rate{6000, 60000}, "::weave::ArgValue::of_rate(6000, 60000)"},
  };
  for (const auto& c : cases) CHECK(arg_value_code(c.first) == c.second);
}

TEST_CASE("arg values: the emitter writes what a key placeholder reads, the object as the proxy or decorator names it",
          "[codegen][emitter]") {
  const KeyAccess chain{false, "ptr", {{"customer", true, true}, {"name", false, false}}};
  CHECK(key_access_code(chain, false) == "ptr->customer().name");
  CHECK(key_access_code(chain, true) == "ptr->customer().name");
  const KeyAccess self{true, "", {{"region_", false, false}}};
  CHECK(key_access_code(self, false) == "(*this).region_");
  CHECK(key_access_code(self, true) == "(*weave_target_).region_");
}
