// weavegen acts on what the vocabulary declares, never on an annotation's
// name: a user's annotation (tests/codegen/vocab/outbox.json) whose argument
// "detaches" or whose values are "throwing_values" gets the same diagnostics
// and the same proxy as cache's refresh_after and lock's on_busy=throw.
#include <catch2/catch.hpp>

#include "weavegen_harness.h"

using namespace weavegen_test;

namespace {

const std::string k_prelude_future =
    "#include <future>\n"                 // 1
    "#include <optional>\n"               // 2
    "#include <string>\n"                 // 3
    "struct Mailer {\n"                   // 4
    "  virtual ~Mailer() = default;\n";   // 5
// The declaration under test is line 6.

}  // namespace

TEST_CASE("vocabulary properties: an argument that detaches refuses a parameter that cannot be copied, the "
          "built-in one and a user's alike",
          "[codegen][vocabulary]") {
  struct Case {
    const char* name;
    const char* decl;  // line 6
    const char* at;    // the error's column: where this text first appears in `decl`
    const char* error;
  } cases[] = {
      {"cache_refresh_after",
       "  [[cache(refresh_after=1min)]] virtual std::optional<int> find(const std::string& id, std::future<int> hint);",
       "1min",
       "'refresh_after' of 'cache' runs 'Mailer::find' again in the background with copies of its arguments, but "
       "parameter 'hint' has type 'std::future<int>', which cannot be copied; pass a copyable type (a value, or "
       "std::shared_ptr), or drop refresh_after"},
      {"outbox_retry_after",
       "  [[outbox(retry_after=30s, on_full=drop)]] virtual void send(const std::string& to, std::future<int> body);",
       "30s",
       "'retry_after' of 'outbox' runs 'Mailer::send' again in the background with copies of its arguments, but "
       "parameter 'body' has type 'std::future<int>', which cannot be copied; pass a copyable type (a value, or "
       "std::shared_ptr), or drop retry_after"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      expect_error_in_declaration(std::string("detaches_") + c.name, k_prelude_future, 6, c.decl, c.at, c.error);
    }
  }
  SECTION("without the detaching argument the same parameter is fine") {
    auto r = run("detaches_not_written",
                 k_prelude_future + "  [[outbox(on_full=drop)]] virtual void send(std::future<int> body);\n};\n");
    expect_woven(r);
  }
}

TEST_CASE("vocabulary properties: a user's detaching argument makes the proxy copy the call, as refresh_after does",
          "[codegen][vocabulary]") {
  auto r = run("detaches_proxy",
               "#include <string>\n"
               "struct Mailer {\n"
               "  virtual ~Mailer() = default;\n"
               "  [[outbox(retry_after=30s, on_full=drop)]] virtual void send(const std::string& to, int n);\n"
               "  [[outbox(on_full=drop)]] virtual void ping(const std::string& to);\n"
               "};\n");
  expect_woven(r);
  const std::string h = read(r.out_h);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(h, Catch::Contains("~Mailer_woven() { ::weave::detail::retire_detached(this); }"));
  CHECK(occurrences(cpp, "::weave::detail::detachable<void>(this, [this](auto& weave_c0, auto& weave_c1) -> void") == 1);
  const auto ping = cpp.find("Mailer_woven::ping(");
  REQUIRE(ping != std::string::npos);
  CHECK(cpp.find("detachable", ping) == std::string::npos);  // ping comes last: only send copies its call
}

TEST_CASE("vocabulary properties: a throwing value on a noexcept method warns, for a user's annotation as for "
          "lock's on_busy=throw",
          "[codegen][vocabulary]") {
  auto r = run("throwing_values",
               "#include <optional>\n"
               "struct C {\n"
               "  virtual ~C() = default;\n"
               "  [[outbox]] virtual void a() noexcept;\n"                                   // 4: default on_full=throw
               "  [[outbox(on_full=throw)]] virtual void b() noexcept;\n"                    // 5: written
               "  [[outbox(on_full=drop)]] virtual void c() noexcept;\n"                     // 6: no warning
               "  [[outbox]] virtual void d();\n"                                            // 7: may throw
               "  [[lock(key=\"e\")]] virtual void e() noexcept;\n"                          // 8
               "  [[cache_evict(name=\"x\", on_error=throw)]] virtual void f() noexcept;\n"  // 9
               "  [[dedupe(key=\"g\")]] virtual void g() noexcept;\n"                        // 10
               "};\n");
  expect_woven(r, "", /*warnings_ok=*/true);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":4:5: warning: 'C::a' is noexcept but on_full=throw: a full outbox "
                                               "will call std::terminate"));
  CHECK_THAT(r.err, Catch::Contains(r.header + ":5:20: warning: 'C::b' is noexcept but on_full=throw: a full outbox "
                                               "will call std::terminate"));
  CHECK_THAT(r.err, Catch::Contains(r.header + ":8:5: warning: 'C::e' is noexcept but on_busy=throw: a busy lock "
                                               "will call std::terminate"));
  CHECK_THAT(r.err, Catch::Contains(r.header + ":9:36: warning: 'C::f' is noexcept but on_error=throw: a failed "
                                               "eviction will call std::terminate"));
  CHECK_THAT(r.err, Catch::Contains(r.header + ":10:5: warning: 'C::g' is noexcept but on_duplicate=throw: a "
                                               "duplicate call will call std::terminate"));
  CHECK(occurrences(r.err, "warning:") == 5);
}
