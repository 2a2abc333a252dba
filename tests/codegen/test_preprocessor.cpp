// weavegen on headers that lean on the preprocessor: export macros, namespaces
// named by macros, #if blocks, declarations made by macros, annotations inside
// #define. Each case generates, and the generated source compiles warning-free.
#include <catch2/catch.hpp>

#include "weavegen_harness.h"

using namespace weavegen_test;

TEST_CASE("preprocessor: an export macro between the annotation and the declaration", "[codegen][preprocessor]") {
  const std::string header =
      "#include <string>\n"
      "#if defined(EXPORT_EMPTY)\n"
      "#define MYLIB_EXPORT\n"
      "#elif defined(EXPORT_VISIBILITY)\n"
      "#define MYLIB_EXPORT __attribute__((visibility(\"default\")))\n"
      "#else\n"
      "#define MYLIB_EXPORT [[nodiscard]]\n"
      "#endif\n"
      "struct Status { int code = 0; };\n"
      "class DB {\n"
      " public:\n"
      "  virtual ~DB() = default;\n"
      "  [[lock(key=\"db:<name>\")]] MYLIB_EXPORT virtual Status Destroy(const std::string& name);\n"
      "#if !defined(EXPORT_VISIBILITY)  // clang accepts no [[...]] after a GNU attribute\n"
      "  MYLIB_EXPORT [[lock(key=\"open:<name>\")]] virtual Status Open(const std::string& name);\n"
      "#endif\n"
      "};\n";
  for (const char* variant : {"EXPORT_EMPTY", "EXPORT_VISIBILITY", "EXPORT_NODISCARD"}) {
    SECTION(variant) {
      const std::string define = std::string("-D") + variant;
      auto r = run_args(std::string("export_") + variant, header,
                        "--annotations " + quote(WEAVE_ANNOTATIONS), define);
      expect_woven(r, define);
      const std::string cpp = read(r.out_cpp);
      CHECK_THAT(cpp, Catch::Contains("\"DB::Destroy\""));
      if (std::string(variant) != "EXPORT_VISIBILITY") CHECK_THAT(cpp, Catch::Contains("\"DB::Open\""));
    }
  }
}

TEST_CASE("preprocessor: namespaces named by macros weave under their real names", "[codegen][preprocessor]") {
  auto r = run("macro_ns",
               "#define MYDB_NAMESPACE mydb\n"
               "#define VERSIONED_BEGIN inline namespace lts_2026 {\n"
               "#define VERSIONED_END }\n"
               "namespace MYDB_NAMESPACE {\n"
               "VERSIONED_BEGIN\n"
               "struct Table {\n"
               "  virtual ~Table() = default;\n"
               "  [[lock(key=\"t:<id>\")]] virtual void drop(int id);\n"
               "};\n"
               "[[lock(key=\"f:<id>\")]] void flush(int id);\n"
               "VERSIONED_END\n"
               "}  // namespace MYDB_NAMESPACE\n");
  expect_woven(r);
  const std::string h = read(r.out_h);
  CHECK_THAT(h, Catch::Contains("namespace mydb {\ninline namespace lts_2026 {"));
  CHECK_THAT(h, Catch::Contains("class Table_woven : public ::mydb::lts_2026::Table"));
  CHECK_THAT(h, Catch::Contains("namespace woven {\nauto flush(int id) -> void;"));
  CHECK_THAT(read(r.out_cpp), Catch::Contains("\"mydb::Table::drop\""));
}

TEST_CASE("preprocessor: inactive #if blocks are ignored, the active branch applies", "[codegen][preprocessor]") {
  const std::string header =
      "struct Platform {\n"
      "  virtual ~Platform() = default;\n"
      "#if 0\n"
      "  [[lokc(key=\"never\")]] virtual void dead();\n"  // misspelt, but never compiled
      "#endif\n"
      "#ifdef _WIN32\n"
      "  [[lock(key=\"win:<id>\")]]\n"
      "#elif defined(USE_SHARDS)\n"
      "  [[lock(key=\"shard:<id>\")]]\n"
      "#else\n"
      "  [[lock(key=\"posix:<id>\")]]\n"
      "#endif\n"
      "  virtual void sync(int id);\n"
      "};\n";
  SECTION("the #else branch") {
    auto r = run("if_else", header);
    expect_woven(r);
    const std::string cpp = read(r.out_cpp);
    CHECK_THAT(cpp, Catch::Contains("\"posix:\""));
    CHECK(cpp.find("win:") == std::string::npos);
    CHECK(cpp.find("shard:") == std::string::npos);
    CHECK(cpp.find("never") == std::string::npos);
  }
  SECTION("the #elif branch, chosen by a definition") {
    auto r = run_args("if_elif", header, "--annotations " + quote(WEAVE_ANNOTATIONS), "-DUSE_SHARDS");
    expect_woven(r, "-DUSE_SHARDS");
    const std::string cpp = read(r.out_cpp);
    CHECK_THAT(cpp, Catch::Contains("\"shard:\""));
    CHECK(cpp.find("posix:") == std::string::npos);
  }
}

TEST_CASE("preprocessor: a method declared by a macro is woven", "[codegen][preprocessor]") {
  auto r = run("macro_decl",
               "#include <string>\n"
               "#define DECLARE_HANDLER(name) virtual int name(const std::string& request)\n"
               "struct Handlers {\n"
               "  virtual ~Handlers() = default;\n"
               "  [[lock(key=\"h:<request>\")]] DECLARE_HANDLER(get_user);\n"
               "  DECLARE_HANDLER(list_users);\n"
               "};\n");
  expect_woven(r);
  CHECK_THAT(read(r.out_h), Catch::Contains("auto get_user(const std::string &request) -> int override;"));
  CHECK(read(r.out_h).find("list_users") == std::string::npos);
}

TEST_CASE("diagnostic: annotations the preprocessor would hide or misplace", "[codegen][preprocessor]") {
  SECTION("a macro that declares two functions") {
    auto r = run("macro_two",
                 "#define DECLARE_PAIR(n) virtual void n(); virtual void n##_async()\n"
                 "struct C {\n"
                 "  [[lock]] DECLARE_PAIR(save);\n"  // line 3
                 "};\n");
    expect_error(r, 3, 5,
                 "annotation 'lock' stands before macro 'DECLARE_PAIR', which declares 2 functions ('save', "
                 "'save_async'); declare the annotated one without the macro");
  }
  SECTION("a macro whose expansion is no function") {
    auto r = run("macro_field",
                 "#define FIELD(n) int n\n"
                 "struct C {\n"
                 "  [[lock]] FIELD(count);\n"  // line 3
                 "};\n");
    expect_error(r, 3, 5, "cannot weave a variable; annotations go on functions and methods (the declaration "
                          "comes from macro 'FIELD')");
  }
  SECTION("a default argument written inside the macro") {
    auto r = run("macro_default",
                 "#define DECLARE_GET(n) virtual int n(int id = 0)\n"
                 "struct C {\n"
                 "  [[lock(key=\"g:<id>\")]] DECLARE_GET(get);\n"  // line 3
                 "};\n");
    expect_error(r, 3, 5, "the default argument of parameter 'id' of 'C::get' comes from a macro expansion");
  }
  SECTION("an annotation inside a #define") {
    auto r = run("macro_define",
                 "#define LOCKED [[lock(key=\"all\")]]\n"  // line 1
                 "struct C {\n"
                 "  LOCKED virtual void f();\n"
                 "};\n");
    expect_error(r, 1, 18, "annotation 'lock' inside the definition of macro 'LOCKED' is not seen where the macro "
                           "is used");
  }
}
