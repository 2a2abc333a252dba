// Runs the real weavegen binary on small headers and checks each diagnostic:
// exit code, the exact `file:line:col: error:` prefix, the message, the caret
// line, and that no output file was written.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Result {
  int exit = -1;
  std::string err;     // stderr
  std::string header;  // path of the header as passed to weavegen
  bool any_output = false;
  std::string out_h, out_cpp;
};

fs::path work_dir() {
  static fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("weavegen_diag_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

Result run_args(const std::string& name, const std::string& text, const std::string& extra_before,
                const std::string& extra_after = "") {
  Result r;
  fs::path dir = work_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  r.header = (dir / (name + ".h")).string();
  std::ofstream(r.header) << text;
  r.out_h = (dir / "out" / (name + ".weave.h")).string();
  r.out_cpp = (dir / "out" / (name + ".weave.cpp")).string();
  fs::path errf = dir / "stderr.txt";
  std::string cmd = quote(WEAVEGEN_EXE) + " " + extra_before + " --output-header " + quote(r.out_h) +
                    " --output-source " + quote(r.out_cpp) + " --depfile " + quote(r.out_h + ".d") + " " +
                    quote(r.header) + " -- -I" + quote(WEAVE_INCLUDE_DIR) + " " + extra_after + " 2> " +
                    quote(errf.string());
  int st = std::system(cmd.c_str());
  r.exit = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read(errf);
  r.any_output = fs::exists(r.out_h) || fs::exists(r.out_cpp) || fs::exists(r.out_h + ".d") ||
                 (fs::exists(dir / "out") && !fs::is_empty(dir / "out"));
  return r;
}

Result run(const std::string& name, const std::string& text) {
  return run_args(name, text,
                  std::string("--annotations ") + quote(WEAVE_ANNOTATIONS) + " --annotations " +
                      quote(WEAVE_TEST_VOCAB));
}

// Asserts a failed run with an error at line:col whose message contains `what`.
void expect_error(const Result& r, int line, int col, const std::string& what) {
  INFO("stderr:\n" << r.err);
  CHECK(r.exit == 1);
  const std::string prefix = r.header + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  auto pos = r.err.find(prefix);
  REQUIRE(pos != std::string::npos);
  auto eol = r.err.find('\n', pos);
  std::string message = r.err.substr(pos + prefix.size(), eol - pos - prefix.size());
  CHECK_THAT(message, Catch::Contains(what));
  // The source line and a caret under the column follow.
  auto l2 = r.err.find('\n', eol + 1);
  REQUIRE(l2 != std::string::npos);
  std::string caret = r.err.substr(l2 + 1, r.err.find('\n', l2 + 1) - l2 - 1);
  CHECK(caret.find('^') == static_cast<std::size_t>(col - 1));
  CHECK_FALSE(r.any_output);
}

const char* k_prelude =
    "#include <string>\n"                      // line 1
    "struct Item { std::string sku; int n() const; };\n";  // line 2

}  // namespace

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
      {"pure", "struct C {\n  [[lock]] virtual void f() = 0;\n};\n", "cannot weave a pure virtual method"},
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

TEST_CASE("warning: misspelt annotation and noexcept with on_busy=throw", "[codegen][diagnostics]") {
  auto r = run("typo", std::string(k_prelude) +
                           "struct C {\n"
                           "  [[nodiscard, lokc(key=\"a\")]] int f();\n"
                           "  [[gnu::always_inline, clang::annotate(\"x\"), deprecated]] void g();\n"
                           "  [[lock]] void h() noexcept;\n"
                           "};\n");
  INFO(r.err);
  CHECK(r.exit == 0);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":4:16: warning: unknown attribute 'lokc' is ignored; did you mean 'lock'?"));
  CHECK_THAT(r.err, Catch::Contains(r.header + ":6:5: warning: 'C::h' is noexcept but on_busy=throw"));
  CHECK(r.err.find("always_inline") == std::string::npos);
  CHECK(r.err.find("deprecated") == std::string::npos);
  CHECK(fs::exists(r.out_h));
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
  CHECK_THAT(cpp, Catch::Contains("#line 5 \"" + r.header + "\""));
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
