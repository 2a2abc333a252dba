// Runs the real weavegen binary on small headers and checks each diagnostic:
// exit code, the exact `file:line:col: error:` prefix, the message, the caret
// line, and that no output file was written.
#include <catch2/catch.hpp>

#include "weavegen_harness.h"

using namespace weavegen_test;

TEST_CASE("a valid header generates both files and a depfile", "[codegen][diagnostics]") {
  auto r = run("good", std::string(k_prelude) +
                           "namespace s { struct C { [[lock(key=\"k:<i.sku>\")]] virtual void f(const Item& i); }; }\n");
  INFO(r.err);
  CHECK(r.exit == 0);
  CHECK(r.err.empty());
  CHECK(fs::exists(r.out_h));
  CHECK(fs::exists(r.out_cpp));
  std::string dep = read(r.out_h + ".d");
  CHECK_THAT(dep, Catch::StartsWith(r.out_h + ":"));
  CHECK_THAT(dep, Catch::Contains("lock.json"));
  CHECK_THAT(dep, Catch::Contains("good.h"));
  CHECK_THAT(dep, Catch::Contains("basic_string.h"));
}

TEST_CASE("diagnostic: unknown argument", "[codegen][diagnostics]") {
  auto r = run("unknown_arg", std::string(k_prelude) +
                                  "struct C {\n"
                                  "  [[lock(key=\"k\", tll=30s)]] void f();\n"  // line 4
                                  "};\n");
  expect_error(r, 4, 19, "unknown argument 'tll' for annotation 'lock'; did you mean 'ttl'?");
}

TEST_CASE("diagnostic: wrong value type", "[codegen][diagnostics]") {
  auto r = run("wrong_type", std::string(k_prelude) +
                                 "struct C {\n"
                                 "  [[lock(ttl=\"30s\")]] void f();\n"
                                 "};\n");
  expect_error(r, 4, 14, "argument 'ttl' of 'lock' expects a duration");
}

TEST_CASE("diagnostic: bad duration unit", "[codegen][diagnostics]") {
  auto r = run("bad_unit", std::string(k_prelude) +
                               "struct C {\n"
                               "  [[lock(wait=30sec)]] void f();\n"
                               "};\n");
  expect_error(r, 4, 15, "unknown duration unit 'sec'");
}

TEST_CASE("diagnostic: exception types must name types weavegen finds from the method's scope", "[codegen][diagnostics]") {
  expect_error_in_declaration("exception_unknown",
                              std::string(k_prelude) + "namespace pay { struct Transient {}; }\nstruct C {\n", 5,
                              "  [[retry(retry_on=[pay::Transient, pay::Permanent])]] virtual void f();",
                              "pay::Permanent", "'pay::Permanent' does not name a type declared before 'C::f'");
}

TEST_CASE("diagnostic: exception types found from the method's scope, std's too, make code that compiles",
          "[codegen][diagnostics]") {
  auto r = run("exception_types", std::string(k_prelude) +
                                      "#include <stdexcept>\n"
                                      "namespace pay {\n"
                                      "struct Transient {};\n"
                                      "struct Client {\n"
                                      "  virtual ~Client() = default;\n"
                                      "  [[retry(retry_on=[Transient, std::runtime_error, ::pay::Transient])]]\n"
                                      "  [[circuit_breaker(record_on=Transient, ignore_on=[std::logic_error])]]\n"
                                      "  virtual int f();\n"
                                      "};\n"
                                      "}  // namespace pay\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  CHECK(compile_errors(r).empty());
  CHECK_THAT(read(r.out_cpp), Catch::Contains("::weave::error_is<::pay::Transient, ::std::runtime_error, ::pay::Transient>"));
}

TEST_CASE("diagnostic: a percentage out of range, or without its %", "[codegen][diagnostics]") {
  expect_error(run("percent_range", std::string(k_prelude) +
                                        "struct C {\n  [[circuit_breaker(failure_rate=150%)]] virtual void f();\n};\n"),
               4, 34, "must be a whole percentage from 1% to 100%, not 150%");
  expect_error(run("percent_sign", std::string(k_prelude) +
                                       "struct C {\n  [[circuit_breaker(failure_rate=50)]] virtual void f();\n};\n"),
               4, 34, "expects a percentage (e.g. 50%)");
}

TEST_CASE("diagnostic: a rate without a unit, with an unknown unit, or admitting nothing", "[codegen][diagnostics]") {
  expect_error(run("rate_no_unit", std::string(k_prelude) + "struct C {\n  [[rate_limit(rate=100)]] virtual void f();\n};\n"),
               4, 21, "rate '100' names no unit");
  // The caret is under the rate's first token; the message names all of it.
  expect_error(
      run("rate_unit", std::string(k_prelude) + "struct C {\n  [[rate_limit(rate=100 / sec)]] virtual void f();\n};\n"),
      4, 21, "rate '100/sec': unknown duration unit 'sec'");
  expect_error(run("rate_zero", std::string(k_prelude) + "struct C {\n  [[rate_limit(rate=0/s)]] virtual void f();\n};\n"),
               4, 21, "admits nothing");
  expect_error(run("rate_missing", std::string(k_prelude) + "struct C {\n  [[rate_limit(burst=5)]] virtual void f();\n};\n"),
               4, 5, "annotation 'rate_limit' requires argument 'rate'");
}

TEST_CASE("diagnostic: semaphore permits below 1, above a million, or missing", "[codegen][diagnostics]") {
  expect_error(run("permits_zero", std::string(k_prelude) + "struct C {\n  [[semaphore(permits=0)]] virtual void f();\n};\n"),
               4, 23, "argument 'permits' of 'semaphore' must be at least 1, not 0");
  expect_error(
      run("permits_huge", std::string(k_prelude) + "struct C {\n  [[semaphore(permits=2000000)]] virtual void f();\n};\n"),
      4, 23, "argument 'permits' of 'semaphore' must be at most 1000000, not 2000000");
  expect_error(run("permits_missing", std::string(k_prelude) + "struct C {\n  [[semaphore(wait=1s)]] virtual void f();\n};\n"),
               4, 5, "annotation 'semaphore' requires argument 'permits'");
}

TEST_CASE("diagnostic: rate_limit's wait only with on_limit=wait, and required there", "[codegen][diagnostics]") {
  expect_error(run("rate_wait_alone",
                   std::string(k_prelude) + "struct C {\n  [[rate_limit(rate=1/s, wait=2s)]] virtual void f();\n};\n"),
               4, 26, "argument 'wait' is only allowed with on_limit=wait");
  expect_error(run("rate_wait_missing", std::string(k_prelude) +
                                            "struct C {\n  [[rate_limit(rate=1/s, on_limit=wait)]] virtual void f();\n};\n"),
               4, 35, "missing argument 'wait': on_limit=wait needs 'wait=...'");
}

TEST_CASE("diagnostic: rate_limit on_limit=skip on a method that must return a value", "[codegen][diagnostics]") {
  expect_error(run("rate_skip", std::string(k_prelude) +
                                    "struct C {\n  [[rate_limit(rate=1/s, on_limit=skip)]] virtual int f();\n};\n"),
               4, 35, "on_limit=skip needs a method that returns void or std::optional<T>");
}

TEST_CASE("diagnostic: a malformed escape in a string argument", "[codegen][diagnostics]") {
  auto r = run("bad_escape", std::string(k_prelude) + "struct C {\n  [[lock(key=\"k:\\q<i>\")]] void f(int i);\n};\n");
  expect_error(r, 4, 14, "unknown escape sequence '\\q'");
}

TEST_CASE("diagnostic: forever where it is not allowed", "[codegen][diagnostics]") {
  auto r = run("forever", std::string(k_prelude) + "struct C {\n  [[lock(ttl=forever)]] void f();\n};\n");
  expect_error(r, 4, 14, "does not accept 'forever'");
}

TEST_CASE("diagnostic: invalid enum value", "[codegen][diagnostics]") {
  auto r = run("bad_enum", std::string(k_prelude) + "struct C {\n  [[lock(on_busy=wait)]] void f();\n};\n");
  expect_error(r, 4, 18, "invalid value 'wait' for argument 'on_busy'");
}

TEST_CASE("diagnostic: unknown placeholder name", "[codegen][diagnostics]") {
  auto r = run("bad_name", std::string(k_prelude) +
                               "struct C {\n"
                               "  [[lock(key=\"order:<oder_id>\")]] void f(int order_id);\n"
                               "};\n");
  // column of 'oder_id' inside the string literal
  expect_error(r, 4, 22, "unknown parameter 'oder_id' in key template; did you mean 'order_id'?");
}

TEST_CASE("diagnostic: placeholder index out of range", "[codegen][diagnostics]") {
  auto r = run("bad_index", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(key=\"a:<arg0>:<arg2>\")]] void f(int x, int y);\n"
                                "};\n");
  expect_error(r, 4, 25, "placeholder 'arg2' is out of range: 'C::f' has 2 parameters");
}

TEST_CASE("diagnostic: unknown member in a member path", "[codegen][diagnostics]") {
  auto r = run("bad_member", std::string(k_prelude) +
                                 "struct C {\n"
                                 "  [[lock(key=\"<item.skew>\")]] void f(const Item& item);\n"
                                 "};\n");
  expect_error(r, 4, 21, "no member named 'skew' in 'Item'; did you mean 'sku'?");
}

TEST_CASE("diagnostic: '.' on a pointer and '->' on a value", "[codegen][diagnostics]") {
  auto r = run("dot_ptr", std::string(k_prelude) +
                              "struct C {\n"
                              "  [[lock(key=\"<item.sku>\")]] void f(const Item* item);\n"
                              "};\n");
  expect_error(r, 4, 21, "'.' used on pointer type 'const Item *'; use '->'");
  auto r2 = run("arrow_val", std::string(k_prelude) +
                                 "struct C {\n"
                                 "  [[lock(key=\"<item->sku>\")]] void f(const Item& item);\n"
                                 "};\n");
  expect_error(r2, 4, 22, "'->' used on 'const Item', which is not a pointer; use '.'");
}

TEST_CASE("diagnostic: call with arguments and method without call", "[codegen][diagnostics]") {
  auto r = run("call_args", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(key=\"<item.n(1)>\")]] void f(const Item& item);\n"
                                "};\n");
  expect_error(r, 4, 23, "calls with arguments are not supported in key templates");
  auto r2 = run("no_call", std::string(k_prelude) +
                               "struct C {\n"
                               "  [[lock(key=\"<item.n>\")]] void f(const Item& item);\n"
                               "};\n");
  expect_error(r2, 4, 21, "'n' is a method of 'Item'; call it as 'n()'");
}

TEST_CASE("diagnostic: unbalanced '<' and empty placeholder", "[codegen][diagnostics]") {
  auto r = run("unbalanced", std::string(k_prelude) +
                                 "struct C {\n"
                                 "  [[lock(key=\"a<b:<x>\")]] void f(int x);\n"
                                 "};\n");
  // "a<b:<x>" parses "<b:<x>" as a placeholder: ':' is unexpected
  expect_error(r, 4, 18, "unexpected ':' in placeholder");
  auto r2 = run("unclosed", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(key=\"id:<x\")]] void f(int x);\n"
                                "};\n");
  expect_error(r2, 4, 18, "unbalanced '<' in key template");
  auto r3 = run("empty_ph", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(key=\"id:<>\")]] void f(int x);\n"
                                "};\n");
  expect_error(r3, 4, 18, "empty placeholder");
}

TEST_CASE("diagnostic: unformattable key type", "[codegen][diagnostics]") {
  auto r = run("unformattable", std::string(k_prelude) +
                                    "struct Opaque { int v; };\n"
                                    "struct C {\n"
                                    "  [[lock(key=\"id:<o>\")]] void f(Opaque o);\n"  // line 5
                                    "};\n");
  expect_error(r, 5, 18, "type 'Opaque' cannot be used in a key; add weave_key(const Opaque&) or operator<<");
}

TEST_CASE("diagnostic: duplicate argument and key/keys together", "[codegen][diagnostics]") {
  auto r = run("duplicate", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(ttl=1s, ttl=2s)]] void f();\n"
                                "};\n");
  expect_error(r, 4, 18, "duplicate argument 'ttl'");
  auto r2 = run("conflict", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(key=\"a\", keys=[\"b\"])]] void f();\n"
                                "};\n");
  expect_error(r2, 4, 19, "'keys' cannot be combined with 'key'");
}

TEST_CASE("diagnostic: max_hold with a fixed ttl, in either order (max_hold alone generates)",
          "[codegen][diagnostics]") {
  auto ok = run("max_hold", std::string(k_prelude) +
                                "struct C {\n"
                                "  [[lock(key=\"k\", max_hold=5min)]] virtual void f();\n"
                                "};\n");
  INFO(ok.err);
  CHECK(ok.exit == 0);
  CHECK_THAT(read(ok.out_cpp) + read(ok.out_h), Catch::Contains("\"max_hold\", ::weave::ArgValue::of_duration_ms(300000)"));
  auto r = run("ttl_then_max_hold", std::string(k_prelude) +
                                        "struct C {\n"
                                        "  [[lock(ttl=1s, max_hold=5s)]] void f();\n"
                                        "};\n");
  expect_error(r, 4, 18, "'max_hold' cannot be combined with 'ttl'");
  auto r2 = run("max_hold_then_ttl", std::string(k_prelude) +
                                         "struct C {\n"
                                         "  [[lock(max_hold=5s, ttl=1s)]] void f();\n"
                                         "};\n");
  expect_error(r2, 4, 23, "'ttl' cannot be combined with 'max_hold'");
}

TEST_CASE("diagnostic: on_busy=skip on a non-void return", "[codegen][diagnostics]") {
  auto r = run("skip_int", std::string(k_prelude) +
                               "struct C {\n"
                               "  [[lock(on_busy=skip)]] int f();\n"
                               "};\n");
  expect_error(r, 4, 18, "on_busy=skip needs a method that returns void or std::optional<T> (or a fallback)");
}

TEST_CASE("diagnostic: lock on a method whose result is still computed after it returns",
          "[codegen][diagnostics]") {
  const std::string types = std::string(k_prelude) +
                            "#include <future>\n"                                              // line 3
                            "template <class T> struct task { struct promise_type; };\n"      // line 4
                            "struct job { struct promise_type {}; };\n";                     // line 5
  auto future = run("async_future", types + "struct C {\n"
                                            "  [[lock(key=\"k\")]] std::future<int> f();\n"  // line 7
                                            "};\n");
  expect_error(future, 7, 5,
               "'lock' ends when the call returns, but 'f' returns 'std::future<int>', whose work may still run "
               "after that");
  auto coroutine = run("async_task", types + "struct C {\n"
                                             "  [[lock]] task<int> g();\n"                     // line 7
                                             "  [[weave::lock(ttl=1s)]] job h();\n"             // line 8
                                             "};\n");
  expect_error(coroutine, 7, 5, "'lock' ends when the call returns, but 'g' returns 'task<int>'");
  expect_error(coroutine, 8, 12, "but 'h' returns 'job'");
  // An annotation whose vocabulary does not say "synchronous" may wrap such methods.
  auto audit = run("async_audit", types + "struct C {\n"
                                          "  [[audit(event=\"e\")]] virtual std::future<int> f();\n"
                                          "};\n");
  INFO(audit.err);
  CHECK(audit.exit == 0);
}

TEST_CASE("warning: an order the vocabulary says cannot work, a retry inside its timeout", "[codegen][diagnostics]") {
  auto r = run("retry_inside_timeout", std::string(k_prelude) +
                                           "struct C {\n"
                                           "  virtual ~C() = default;\n"
                                           "  [[timeout(after=1s)]] [[retry(order=-10)]] virtual int f();\n"  // line 5
                                           "  [[retry]] [[timeout(after=1s)]] virtual int g();\n"                // default order: fine
                                           "};\n");
  INFO(r.err);
  CHECK(r.exit == 0);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":5:27: warning: 'retry' (order -10) runs inside 'timeout' (order -20): "
                                               "every run then shares the one deadline"));
  CHECK(r.err.find(":6:") == std::string::npos);
}

TEST_CASE("warning: public and protected annotated overloads share one public using", "[codegen][diagnostics]") {
  auto r = run("mixed_access", std::string(k_prelude) +
                                   "struct C {\n"
                                   "  [[lock]] virtual int f(int);\n"
                                   " protected:\n"
                                   "  [[lock]] virtual int f(char);\n"  // line 6
                                   "};\n");
  INFO(r.err);
  CHECK(r.exit == 0);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":6:5: warning: 'f' has public and protected annotated overloads"));
  const std::string h = read(r.out_h);
  CHECK(h.find("using weave_base::f;") == h.rfind("using weave_base::f;"));  // once
}

TEST_CASE("diagnostic: missing or misplaced fallback", "[codegen][diagnostics]") {
  auto r = run("no_fallback", std::string(k_prelude) +
                                  "struct C {\n"
                                  "  [[lock(on_busy=fallback)]] int f();\n"
                                  "};\n");
  expect_error(r, 4, 18, "missing argument 'fallback': on_busy=fallback needs 'fallback=...'");
  auto r2 = run("fallback_unknown", std::string(k_prelude) +
                                        "struct C {\n"
                                        "  [[lock(on_busy=fallback, fallback=nope)]] int f();\n"
                                        "};\n");
  expect_error(r2, 4, 37, "no function named 'nope'");
  auto r3 = run("fallback_alone", std::string(k_prelude) +
                                      "struct C {\n"
                                      "  int g();\n"
                                      "  [[lock(fallback=g)]] int f();\n"
                                      "};\n");
  expect_error(r3, 5, 10, "argument 'fallback' is only allowed with on_busy=fallback");
}

TEST_CASE("diagnostic: missing required argument of a user annotation", "[codegen][diagnostics]") {
  auto r = run("audit_required", std::string(k_prelude) +
                                     "struct C {\n"
                                     "  [[audit(level=warn)]] void f();\n"
                                     "};\n");
  expect_error(r, 4, 5, "annotation 'audit' requires argument 'event'");
}

TEST_CASE("diagnostic: unsupported declarations", "[codegen][diagnostics]") {
  struct Case {
    const char* name;
    const char* body;  // line 4 holds the annotation (at column 5 unless given)
    const char* what;
    int col = 5;
  } cases[] = {
      {"ctor", "struct C {\n  [[lock]] C();\n};\n", "cannot weave a constructor"},
      {"dtor", "struct C {\n  [[lock]] ~C();\n};\n", "cannot weave a destructor"},
      {"deleted", "struct C {\n  [[lock]] void f() = delete;\n};\n", "cannot weave a deleted function"},
      {"field", "struct C {\n  [[lock]] int x;\n};\n", "cannot weave a variable"},
      {"variable", "\n  [[lock]] int global_x = 1;\n", "cannot weave a variable"},
      {"class", "\n  class [[lock]] K {};\n", "cannot weave a class", 11},
      {"fn_template", "struct C {\n  template <class T> [[lock]] void f(T);\n};\n", "cannot weave a function template", 24},
      {"class_template", "template <class T> struct C {\n  [[lock]] void f();\n};\n",
       "cannot weave a method of a class template"},
      {"private", "class C {\n  [[lock]] void f();\n};\n", "cannot weave a private method"},
      {"interface_nonvirtual", "struct C {\n  [[lock]] void f();\n  virtual void g() = 0;\n};\n",
       "'f' is not virtual: calls through interface 'C' never reach its decorator"},
      {"interface_nonvirtual_const", "struct C {\n  [[lock]] int f() const;\n  virtual void g() = 0;\n};\n",
       "'f' is not virtual: calls through interface 'C' never reach its decorator"},
      {"interface_protected", "struct C {\n protected: [[lock]] virtual void f() = 0;\n};\n",
       "cannot weave a protected method of interface 'C'", 15},
      {"interface_protected_static", "struct C {\n protected: [[lock]] static void f();\n  virtual void g() = 0;\n};\n",
       "cannot weave a protected static method of interface 'C' (its decorator is final", 15},
      {"interface_no_default_ctor", "struct C {\n  [[lock]] virtual void f() = 0;\n  explicit C(int);\n};\n",
       "cannot decorate interface 'C': it has no default constructor"},
      {"interface_private_pure", "class C {\n public: [[lock]] virtual void f() = 0;\n private: virtual void g() = 0;\n};\n",
       "cannot decorate interface 'C': its pure virtual method 'g' is not public", 12},
      {"final_class", "struct C final {\n  [[lock]] void f();\n};\n", "cannot weave a method of final class 'C'"},
      {"operator", "struct C {\n  [[lock]] bool operator==(const C&) const;\n};\n", "cannot weave an operator"},
      {"variadic", "struct C {\n  [[lock]] void f(int, ...);\n};\n", "cannot weave a C variadic function"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto r = run(std::string("unsupported_") + c.name, std::string(k_prelude) + c.body);
      expect_error(r, 4, c.col, c.what);
    }
  }
}

TEST_CASE("diagnostic: parse errors in the header are forwarded", "[codegen][diagnostics]") {
  auto r = run("parse_error", std::string(k_prelude) +
                                  "struct C {\n"
                                  "  [[lock]] void f(int x) oops;\n"
                                  "};\n");
  INFO(r.err);
  CHECK(r.exit == 1);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":4:"));
  CHECK_THAT(r.err, Catch::Contains(": error: "));
  CHECK_FALSE(r.any_output);
}

TEST_CASE("diagnostic: unknown weave:: annotation is an error", "[codegen][diagnostics]") {
  auto r = run("weave_unknown", std::string(k_prelude) +
                                    "struct C {\n"
                                    "  [[weave::lok(key=\"a\")]] void f();\n"
                                    "};\n");
  expect_error(r, 4, 12, "unknown weave annotation 'weave::lok'; did you mean 'lock'?");
}

TEST_CASE("diagnostic: a misspelt annotation is an error, vendor and standard attributes are not",
          "[codegen][diagnostics]") {
  const std::string header = std::string(k_prelude) +
                             "struct C {\n"
                             "  [[nodiscard, lokc(key=\"a\")]] int f();\n"                                  // line 4
                             "  [[gnu::always_inline, clang::annotate(\"x\"), deprecated]] void g();\n"
                             "  [[lock]] void h() noexcept;\n"                                                // line 6
                             "};\n";
  auto r = run("typo", header);
  expect_error(r, 4, 16, "unknown attribute 'lokc'; did you mean 'lock'? (neither standard nor an annotation: "
                         "the method would run without it");
  CHECK(r.err.find("always_inline") == std::string::npos);
  CHECK(r.err.find("deprecated") == std::string::npos);

  // Opted out: a warning, and the proxy is written.
  auto allowed = run_args("typo_allowed", header,
                          "--allow-unknown-attributes --annotations " + quote(WEAVE_ANNOTATIONS));
  INFO(allowed.err);
  CHECK(allowed.exit == 0);
  CHECK_THAT(allowed.err,
             Catch::Contains(allowed.header + ":4:16: warning: unknown attribute 'lokc' is ignored; did you mean 'lock'?"));
  CHECK_THAT(allowed.err, Catch::Contains(allowed.header + ":6:5: warning: 'C::h' is noexcept but on_busy=throw"));
  CHECK(fs::exists(allowed.out_h));

  // --warnings-as-errors: the same warnings fail the run, and nothing is written.
  auto strict = run_args("typo_strict", header,
                         "--allow-unknown-attributes --warnings-as-errors --annotations " + quote(WEAVE_ANNOTATIONS));
  CHECK(strict.exit == 1);
  CHECK_THAT(strict.err, Catch::Contains("weavegen: error: 2 warnings treated as errors (--warnings-as-errors)"));
  CHECK_FALSE(strict.any_output);
}

TEST_CASE("annotations across lines with comments, lists and several specifiers", "[codegen][diagnostics]") {
  auto r = run("layout", std::string(k_prelude) +
                             "struct C {\n"
                             "  [[nodiscard,  // why\n"
                             "    lock(key=\"a:<x>\", /* c */\n"
                             "         wait=250ms)]]\n"
                             "  [[audit(event=\"e\")]]\n"
                             "  virtual int f(int x);\n"
                             "  [[lock(key=\"b\"), audit(event=\"e2\", order=1)]] virtual void g();\n"
                             "};\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("{\"wait\", ::weave::ArgValue::of_duration_ms(250)}"));
  CHECK_THAT(cpp, Catch::Contains("{\"audit\", /*order*/ 1"));
  CHECK_THAT(cpp, Catch::Contains("#line 5 \"../layout.h\""));  // relative to the output (no -I holds it)
}

TEST_CASE("usage errors exit with 2", "[codegen][diagnostics]") {
  int st = std::system((quote(WEAVEGEN_EXE) + " --bogus 2>/dev/null").c_str());
  CHECK(WEXITSTATUS(st) == 2);
  st = std::system((quote(WEAVEGEN_EXE) + " --output-header a.h 2>/dev/null").c_str());
  CHECK(WEXITSTATUS(st) == 2);
  auto r = run_args("missing_vocab", "void f();\n", "--annotations /nonexistent/dir");
  CHECK(r.exit == 2);
  CHECK_FALSE(r.any_output);
}

// --- paths in the output: none absolute (relocatable builds) -----------------

namespace {

std::string vocab_args() {
  return std::string("--annotations ") + quote(WEAVE_ANNOTATIONS) + " --annotations " + quote(WEAVE_TEST_VOCAB);
}

const char* k_model = "struct M { [[lock(key=\"m:<id>\")]] virtual void f(int id); };\n";  // line 1

}  // namespace

TEST_CASE("the include spelling is relative to a -I dir and resolves to the header itself", "[codegen][paths]") {
  // work/spelling/spelling.h is the header; work/spelling_shadow/spelling.h another one.
  const fs::path shadow = work_dir() / "spelling_shadow";
  fs::create_directories(shadow);
  std::ofstream(shadow / "spelling.h") << "struct Other {};\n";
  const std::string own = "-I" + quote((work_dir() / "spelling").string());
  const std::string parent = "-I" + quote(work_dir().string());

  auto r = run_args("spelling", k_model, vocab_args(), own + " " + parent);
  INFO(r.err);
  REQUIRE(r.exit == 0);
  CHECK_THAT(read(r.out_h), Catch::Contains("#include \"spelling.h\"\n"));  // the shortest

  // "spelling.h" would now find the shadow first: the longer spelling is the right one.
  r = run_args("spelling", k_model, vocab_args(), "-I" + quote(shadow.string()) + " " + own + " " + parent);
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const std::string h = read(r.out_h), cpp = read(r.out_cpp);
  CHECK_THAT(h, Catch::Contains("#include \"spelling/spelling.h\"\n"));
  CHECK_THAT(h, Catch::Contains("// Generated by weavegen from spelling/spelling.h;"));
  CHECK_THAT(cpp, Catch::Contains("\"M::f\", \"spelling/spelling.h\", 1,"));  // MethodInfo
  CHECK_THAT(cpp, Catch::Contains("#line 1 \"spelling/spelling.h\"\n"));
  CHECK_THAT(cpp, Catch::Contains(" \"spelling.weave.cpp\"\n"));  // #line back into the source
  CHECK(h.find(work_dir().string()) == std::string::npos);
  CHECK(cpp.find(work_dir().string()) == std::string::npos);
}

TEST_CASE("the header pragmas silence unknown-attribute warnings around the include", "[codegen][paths]") {
  auto r = run_args("pragmas", k_model, vocab_args());
  INFO(r.err);
  REQUIRE(r.exit == 0);
  CHECK_THAT(read(r.out_h), Catch::Contains("#pragma GCC diagnostic ignored \"-Wattributes\"\n#endif\n"
                                            "#include \"../pragmas.h\"\n#if defined(__clang__)\n"
                                            "#pragma clang diagnostic pop\n"));
}

TEST_CASE("the header is named relative to --source-root, and --include-as still wins", "[codegen][paths]") {
  auto r = run_args("rooted", k_model, vocab_args() + " --source-root " + quote(work_dir().string()));
  INFO(r.err);
  REQUIRE(r.exit == 0);
  std::string h = read(r.out_h), cpp = read(r.out_cpp);
  CHECK_THAT(h, Catch::Contains("#include \"../rooted.h\"\n"));  // no -I holds it
  CHECK_THAT(h, Catch::Contains("// Generated by weavegen from rooted/rooted.h;"));
  CHECK_THAT(cpp, Catch::Contains("\"M::f\", \"rooted/rooted.h\", 1,"));
  CHECK_THAT(cpp, Catch::Contains("#line 1 \"rooted/rooted.h\"\n"));

  // A root that does not hold the header: the include spelling names it.
  const std::string elsewhere = quote((work_dir() / "elsewhere").string());
  r = run_args("rooted", k_model, vocab_args() + " --include-as '<lib/rooted.h>' --source-root " + elsewhere);
  INFO(r.err);
  REQUIRE(r.exit == 0);
  h = read(r.out_h);
  cpp = read(r.out_cpp);
  CHECK_THAT(h, Catch::Contains("#include <lib/rooted.h>\n"));
  CHECK_THAT(cpp, Catch::Contains("\"M::f\", \"lib/rooted.h\", 1,"));
  CHECK(cpp.find(work_dir().string()) == std::string::npos);
}

// Asynchronous methods (boost::asio::awaitable<T>, docs/async.md): tagged
// [async], left out of a build without the async component (they include Boost).
namespace {
const std::string k_async_prelude = std::string(k_prelude) +
                                    "#include <string_view>\n"                   // line 3
                                    "#include <boost/asio/awaitable.hpp>\n"      // line 4
                                    "#include <boost/asio/io_context.hpp>\n"     // line 5
                                    "using boost::asio::awaitable;\n"            // line 6
                                    "struct C {\n";                              // line 7
}  // namespace

TEST_CASE("an asynchronous method is woven as a coroutine awaiting its chain", "[codegen][diagnostics][async]") {
  auto r = run("async_ok", k_async_prelude +
                               "  [[lock(key=\"acct:<id>\")]] virtual awaitable<long> add(std::string id, int cents);\n"
                               "  [[cache(name=\"r\", key=\"<ccy>\")]] virtual awaitable<double> rate(std::string ccy);\n"
                               "  [[lock(key=\"k\", on_busy=skip)]] virtual awaitable<void> ping();\n"
                               "};\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("#include <weave/generated/invoke_async.h>"));
  CHECK_THAT(cpp, Catch::Contains("co_return co_await ::weave::detail::invoke_async<awaitable<long>>("));
  // The cache keeps the task's value, not the task.
  CHECK_THAT(cpp, Catch::Contains("make_result_codec<double>(\"double\")"));
  CHECK(compile_errors(r).empty());
}

TEST_CASE("diagnostic: an asynchronous method takes its arguments by value", "[codegen][diagnostics][async]") {
  expect_error_in_declaration("async_ref", k_async_prelude, 8,
                              "  [[lock(key=\"acct:<id>\")]] virtual awaitable<long> add(const std::string& id);",
                              "lock",
                              "'C::add' is asynchronous (it returns 'awaitable<long>'): its coroutine may run after "
                              "the caller's arguments are gone, but parameter 'id' is 'const std::string &', a "
                              "reference; take it by value");
  expect_error_in_declaration("async_view", k_async_prelude, 8,
                              "  [[audit(event=\"e\")]] awaitable<int> f(std::string_view name);", "audit",
                              "parameter 'name' is 'std::string_view', a view; take it by value");
  expect_error_in_declaration("async_pointer", k_async_prelude, 8,
                              "  [[audit(event=\"e\")]] awaitable<int> f(const Item* item);", "audit",
                              "parameter 'item' is 'const Item *', a pointer; take it by value");
}

TEST_CASE("diagnostic: what Weave does not do for an asynchronous method", "[codegen][diagnostics][async]") {
  expect_error_in_declaration(
      "async_executor", k_async_prelude, 8,
      "  [[audit(event=\"e\")]] awaitable<int, boost::asio::io_context::executor_type> f();", "audit",
      "an awaitable on another executor: Weave weaves boost::asio::awaitable<T> and asio::awaitable<T> with the "
      "default executor");
  expect_error_in_declaration("async_refresh", k_async_prelude, 8,
                              "  [[cache(name=\"r\", key=\"k\", refresh_after=1s)]] awaitable<int> f();", "1s",
                              "'refresh_after' of 'cache' runs 'C::f' again in the background, which Weave does not "
                              "do for an asynchronous method yet");
  expect_error_in_declaration("async_delay", k_async_prelude, 8,
                              "  [[delay(queue=\"q\", after=1s)]] virtual awaitable<void> f(int n);", "delay",
                              "'delay' stores the call of 'C::f' to run it later, but it is asynchronous");
}

// Standalone Asio's awaitable<T> (asio::, weave/asio.h) is woven as Boost's
// is. Tagged [asio]: its names are declared here, so it needs no Asio
// installed (the output is read, not compiled).
namespace {
const std::string k_standalone_prelude = std::string(k_prelude) +
                                         "namespace asio {\n"                                           // line 3
                                         "class any_io_executor {};\n"                                  // line 4
                                         "template <class T, class E = any_io_executor> class awaitable {};\n"  // line 5
                                         "struct io_context { struct executor_type {}; };\n"            // line 6
                                         "}  // namespace asio\n"                                       // line 7
                                         "struct C {\n";                                                // line 8
}  // namespace

TEST_CASE("a standalone Asio awaitable method is woven as a coroutine awaiting its chain",
          "[codegen][diagnostics][asio]") {
  auto r = run("standalone_asio_ok", k_standalone_prelude +
                                         "  [[lock(key=\"acct:<id>\")]] virtual asio::awaitable<long> add(std::string id);\n"
                                         "  [[cache(name=\"r\", key=\"<ccy>\")]] asio::awaitable<double> rate(std::string ccy);\n"
                                         "};\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("#include <weave/generated/invoke_async.h>"));
  CHECK_THAT(cpp, Catch::Contains("co_return co_await ::weave::detail::invoke_async<asio::awaitable<long>>("));
  CHECK_THAT(cpp, Catch::Contains("make_result_codec<double>(\"double\")"));
  // By reference: the rule of every asynchronous method holds.
  expect_error_in_declaration("standalone_asio_ref", k_standalone_prelude, 9,
                              "  [[lock(key=\"acct:<id>\")]] asio::awaitable<long> add(const std::string& id);", "lock",
                              "'C::add' is asynchronous (it returns 'asio::awaitable<long>')");
  expect_error_in_declaration(
      "standalone_asio_executor", k_standalone_prelude, 9,
      "  [[lock(key=\"k\")]] asio::awaitable<int, asio::io_context::executor_type> f();", "lock",
      "an awaitable on another executor: Weave weaves boost::asio::awaitable<T> and asio::awaitable<T>");
}

TEST_CASE("diagnostic: [[retry]] refuses parameters a second run could not get again", "[codegen][diagnostics]") {
  expect_error(run("retry_rvalue", std::string(k_prelude) +
                                       "struct C {\n  [[retry(attempts=2)]] virtual void f(Item&& i);\n};\n"),
               4, 5, "'retry' runs the method again, but its parameter 'i' (Item &&) is an rvalue reference a run may "
                     "move from; take it by const reference");
  expect_error(run("retry_move_only", std::string(k_prelude) +
                                          "struct Once { Once(Once&&) = default; };\n"
                                          "struct C {\n  [[retry(attempts=2)]] virtual void f(Once o);\n};\n"),
               5, 5, "'retry' runs the method again, but its parameter 'o' (Once) cannot be copied to each run");
  // By value and copyable: copied to each run, never moved.
  auto r = run("retry_copies", std::string(k_prelude) +
                                   "struct C {\n  [[retry(attempts=2)]] virtual int f(std::string s, Item i);\n};\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const std::string cpp = read(r.out_cpp) + read(r.out_h);
  CHECK_THAT(cpp, !Catch::Contains("::std::move(s)") && !Catch::Contains("::std::move(i)"));
  CHECK(compile_errors(r).empty());
}
