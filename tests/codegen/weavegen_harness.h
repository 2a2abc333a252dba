// Runs the real weavegen binary on small headers written by a test (shared
// by the codegen test files): the result is the exit code, stderr and the
// generated files; `compiles()` builds the generated source with the C++
// compiler of the build.
#pragma once

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

namespace weavegen_test {

struct Result {
  int exit = -1;
  std::string err;     // stderr
  std::string header;  // path of the header as passed to weavegen
  bool any_output = false;
  std::string out_h, out_cpp;
};

inline fs::path work_dir() {
  static fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("weavegen_diag_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string quote(const std::string& s) { return "'" + s + "'"; }

// How many times `what` occurs in `text` (overlapping ones included).
inline int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline Result run_args(const std::string& name, const std::string& text, const std::string& extra_before,
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

inline Result run(const std::string& name, const std::string& text) {
  return run_args(name, text,
                  std::string("--annotations ") + quote(WEAVE_ANNOTATIONS) + " --annotations " +
                      quote(WEAVE_TEST_VOCAB));
}

// Asserts a failed run with an error at line:col whose message contains `what`.
inline void expect_error(const Result& r, int line, int col, const std::string& what) {
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

// A header of `prelude` (`line` - 1 lines), the declaration `decl` and
// "};": weavegen refuses it with an error at the column where `at` first
// appears in `decl`, whose message contains `what`.
inline void expect_error_in_declaration(const std::string& name, const std::string& prelude, int line,
                                        const std::string& decl, const std::string& at, const std::string& what) {
  const auto column = decl.find(at);
  REQUIRE(column != std::string::npos);
  expect_error(run(name, prelude + decl + "\n};\n"), line, static_cast<int>(column) + 1, what);
}

inline const char* k_prelude =
    "#include <string>\n"                      // line 1
    "struct Item { std::string sku; int n() const; };\n";  // line 2

// Compiles the generated source (so the generated header and the annotated
// header too) with the build's C++ compiler and -Wall -Wextra -Werror, and no
// flag for the annotations. Returns the compiler's complaints ("" = clean).
inline std::string compile_errors(const Result& r, const std::string& flags = "") {
  fs::path errf = fs::path(r.out_cpp).parent_path() / "compile.txt";
  std::string cmd = quote(WEAVE_TEST_CXX) + " -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I" +
                    quote(WEAVE_INCLUDE_DIR) + " " + flags + " " + quote(r.out_cpp) + " > " + quote(errf.string()) +
                    " 2>&1";
  int st = std::system(cmd.c_str());
  std::string out = read(errf);
  if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && out.empty()) out = "compiler failed: " + cmd;
  return out;
}

// Generation succeeds (without a diagnostic unless `warnings_ok`) and the
// generated source compiles with `flags`.
inline void expect_woven(const Result& r, const std::string& flags = "", bool warnings_ok = false) {
  INFO("weavegen stderr:\n" << r.err);
  REQUIRE(r.exit == 0);
  if (!warnings_ok) CHECK(r.err.empty());
  INFO("generated source:\n" << read(r.out_cpp));
  CHECK(compile_errors(r, flags) == "");
}

}  // namespace weavegen_test
