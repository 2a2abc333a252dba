// weavegen on declaration shapes of real code: trailing return types, calls
// with defaulted parameters, noexcept(false), results that complete later,
// interfaces (decorators) and keys that read the object.
#include <catch2/catch.hpp>

#include "weavegen_harness.h"

using namespace weavegen_test;

TEST_CASE("declarations: a trailing return type that names a parameter", "[codegen][declarations]") {
  auto r = run("trailing",
               "#include <string>\n"
               "struct Text {\n"
               "  virtual ~Text() = default;\n"
               "  [[lock(key=\"len:<id>\")]] virtual auto length(const std::string& id) -> decltype(id.size());\n"
               "};\n"
               "[[lock(key=\"twice:<v>\")]] auto twice(int v) -> decltype(v * 2);\n");
  expect_woven(r);
  CHECK(r.err.empty());
  CHECK_THAT(read(r.out_h), Catch::Contains("auto length(const std::string &id) -> decltype(id.size()) override;"));
}

TEST_CASE("declarations: a key calls a method whose parameters all have defaults", "[codegen][declarations]") {
  auto r = run("defaulted_call",
               "#include <string>\n"
               "struct Key { std::string ToString(bool hex = false, int width = 0) const; };\n"
               "struct Store {\n"
               "  virtual ~Store() = default;\n"
               "  [[lock(key=\"k:<key.ToString()>\")]] virtual void put(const Key& key);\n"
               "};\n");
  expect_woven(r);
  CHECK(r.err.empty());
  // A method that needs an argument is still refused.
  auto refused = run("needs_argument",
                     "#include <string>\n"
                     "struct Key { std::string Format(int width, bool hex = false) const; };\n"
                     "struct Store {\n"
                     "  [[lock(key=\"k:<key.Format()>\")]] void put(const Key& key);\n"  // line 4
                     "};\n");
  expect_error(refused, 4, 22, "method 'Format' of 'Key' takes arguments");
}

TEST_CASE("declarations: only a method that really is noexcept gets the on_busy=throw warning",
          "[codegen][declarations]") {
  auto r = run("noexcept_kinds",
               "struct C {\n"
               "  virtual ~C() = default;\n"
               "  [[lock]] virtual void a() noexcept(false);\n"          // line 3: no warning
               "  [[lock]] virtual void b() noexcept(sizeof(int) > 1);\n"  // line 4: warning
               "  [[lock]] virtual void c() noexcept(true);\n"            // line 5: warning
               "  [[lock(on_busy=skip)]] virtual void d() noexcept;\n"     // line 6: no warning
               "};\n");
  expect_woven(r, "", /*warnings_ok=*/true);
  CHECK(r.err.find(":3:") == std::string::npos);
  CHECK_THAT(r.err, Catch::Contains(r.header + ":4:5: warning: 'C::b' is noexcept but on_busy=throw"));
  CHECK_THAT(r.err, Catch::Contains(r.header + ":5:5: warning: 'C::c' is noexcept but on_busy=throw"));
  CHECK(r.err.find(":6:") == std::string::npos);
  const std::string h = read(r.out_h);
  CHECK_THAT(h, Catch::Contains("auto a() -> void override;"));
  CHECK_THAT(h, Catch::Contains("auto b() noexcept -> void override;"));
}

TEST_CASE("diagnostic: lock on results that complete after the call returns, shape by shape",
          "[codegen][declarations]") {
  const std::string types =
      "#include <coroutine>\n"                                                                      // 1
      "#include <future>\n"                                                                         // 2
      "template <class T> struct awaitable {};\n"                                                   // 3
      "template <class T, class... A> struct std::coroutine_traits<awaitable<T>, A...> {\n"         // 4
      "  struct promise_type;\n"                                                                    // 5
      "};\n"                                                                                        // 6
      "struct Job {};\n"                                                                            // 7
      "template <> struct std::coroutine_traits<Job> { struct promise_type; };\n"                   // 8
      "struct Ready { bool await_ready() const; void await_suspend(std::coroutine_handle<>); int await_resume(); };\n"
      "struct Awaited { Ready operator co_await() const; };\n"                                      // 10
      "template <class T> struct Deferred {};\n"                                                    // 11
      "template <class T> Ready operator co_await(Deferred<T>);\n"                                  // 12
      "template <class T> struct task { template <class F> auto then(F f); T get(); };\n"           // 13
      "template <class T> struct Future { T get(); void wait(); };\n"                               // 14
      "struct Plain { int get() const; };\n";                                                       // 15
  // Coroutine types other than the supported one name it.
  const std::string supported =
      "; Weave weaves methods returning boost::asio::awaitable<T> or asio::awaitable<T> as asynchronous";
  const std::string traits = "a coroutine type: std::coroutine_traits is specialized for it" + supported;
  const std::string awaitable = "an awaitable: it has await_ready or operator co_await" + supported;
  struct Case {
    const char* name;
    const char* ret;
    std::string why;
  } cases[] = {
      {"coroutine_traits_partial", "awaitable<int>", traits},
      {"coroutine_traits_full", "Job", traits},
      {"await_ready", "Ready", awaitable},
      {"member_co_await", "Awaited", awaitable},
      {"free_co_await", "Deferred<int>", awaitable},
      {"then", "task<int>", "a future: it has a continuation, then()"},
      {"get_wait", "Future<int>", "a future: it has get() and wait()"},
      {"shared_future", "std::shared_future<int>", "a std::future is ready later"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto r = run(std::string("async_") + c.name,
                   types + "[[lock(key=\"k\")]] " + c.ret + " work();\n");  // line 16
      expect_error(r, 16, 3, std::string("'lock' ends when the call returns, but 'work' returns '") + c.ret +
                                 "', whose work may still run after that (" + c.why + ")");
    }
  }
  SECTION("a plain result with get() is complete at return") {
    auto r = run("async_plain", types + "[[lock(key=\"k\")]] Plain work();\n");
    INFO(r.err);
    CHECK(r.exit == 0);
  }
}

TEST_CASE("declarations: an interface gets a decorator that forwards every public virtual method",
          "[codegen][declarations]") {
  auto r = run("interface",
               "#include <string>\n"
               "namespace pay {\n"
               "struct Audited {\n"
               "  virtual ~Audited() = default;\n"
               "  virtual std::string last_event() const = 0;\n"
               "  virtual void note(const std::string& s) { (void)s; }\n"
               "};\n"
               "class PaymentService : public Audited {\n"
               " public:\n"
               "  [[lock(key=\"pay:<order_id>\", on_busy=fallback, fallback=busy)]]\n"
               "  virtual int charge(const std::string& order_id, int cents = 100) = 0;\n"
               "  virtual int busy(const std::string& order_id, int cents) = 0;\n"
               "  [[lock(key=\"refund:<order_id>\")]] virtual void refund(const std::string& order_id) && = 0;\n"
               "  int not_virtual() const { return 1; }\n"
               " protected:\n"
               "  virtual void hook() {}\n"
               "};\n"
               "}  // namespace pay\n");
  expect_woven(r);
  const std::string h = read(r.out_h);
  CHECK_THAT(h, Catch::Contains("class PaymentService_decorated final : public ::pay::PaymentService"));
  CHECK_THAT(h, Catch::Contains("auto charge(const std::string &order_id, int cents = 100) -> int override;"));
  CHECK_THAT(h, Catch::Contains("{ return weave_target_->busy(order_id, cents); }"));
  CHECK_THAT(h, Catch::Contains("{ return weave_target_->last_event(); }"));
  CHECK_THAT(h, Catch::Contains("{ return weave_target_->note(s); }"));
  CHECK(h.find("hook") == std::string::npos);         // protected: not reachable on the implementation
  CHECK(h.find("not_virtual") == std::string::npos);  // calls through the interface never reach a decorator
  CHECK_THAT(h, Catch::Contains("struct weave::decorator_traits<::pay::PaymentService>"));
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("return ::std::move(*weave_target_).refund(order_id);"));
  CHECK_THAT(cpp, Catch::Contains("return weave_target_->busy(order_id, cents);"));  // the fallback
}

TEST_CASE("declarations: an interface's annotated static methods are woven on its decorator (DB::Open)",
          "[codegen][declarations]") {
  // leveldb's and rocksdb's entry point: a static factory on the interface.
  auto r = run("interface_static",
               "#include <string>\n"
               "namespace kv {\n"
               "struct Status { bool ok = true; };\n"
               "struct Options {};\n"
               "class DB {\n"
               " public:\n"
               "  [[lock(key=\"open:<name>\")]]\n"
               "  static Status Open(const Options& options, const std::string& name, DB** dbptr);\n"
               "  static Status Open(const std::string& name, DB** dbptr);\n"
               "  [[lock(key=\"repair:<name>\", on_busy=fallback, fallback=Busy)]]\n"
               "  static Status Repair(const std::string& name);\n"
               "  static Status Busy(const std::string& name);\n"
               "  virtual ~DB() = default;\n"
               "  [[lock(key=\"put:<key>\")]] virtual Status Put(const std::string& key) = 0;\n"
               "};\n"
               "}  // namespace kv\n");
  expect_woven(r);
  const std::string h = read(r.out_h);
  INFO("generated header:\n" << h);
  CHECK_THAT(h, Catch::Contains("class DB_decorated final : public ::kv::DB"));
  CHECK_THAT(h, Catch::Contains("  using weave_base::Open;\n"));  // the other Open stays visible
  CHECK_THAT(h, Catch::Contains("  static auto Open(const kv::Options &options, const std::string &name, kv::DB **dbptr) "
                                "-> kv::Status;"));
  CHECK_THAT(h, Catch::Contains("  static auto Repair(const std::string &name) -> kv::Status;"));
  CHECK_THAT(h, Catch::Contains("auto Put(const std::string &key) -> kv::Status override;"));
  const std::string cpp = read(r.out_cpp);
  INFO("generated source:\n" << cpp);
  // No object: the statics call the interface's own, never the implementation.
  CHECK_THAT(cpp, Catch::Contains("[&]() -> kv::Status { return weave_base::Open(options, name, dbptr); }"));
  CHECK_THAT(cpp, Catch::Contains("[&]() -> kv::Status { return weave_base::Busy(name); }"));
  CHECK_THAT(cpp, Catch::Contains("return weave_target_->Put(key);"));
  CHECK_THAT(cpp, Catch::Contains("constexpr ::weave::MethodInfo weave_m0_info{\"kv::DB::Open\""));
}

TEST_CASE("diagnostic: keys that read the object", "[codegen][declarations]") {
  const std::string cls =
      "#include <string>\n"                                                          // 1
      "class Svc {\n"                                                                // 2
      " public:\n"                                                                   // 3
      "  virtual ~Svc() = default;\n"                                                // 4
      "  std::string tenant() const;\n"                                              // 5
      "  std::string next_id();\n"                                                   // 6
      " protected:\n"                                                                // 7
      "  std::string region_;\n"                                                     // 8
      " private:\n"                                                                  // 9
      "  std::string secret_;\n"                                                     // 10
      " public:\n";                                                                  // 11
  SECTION("data members and const methods, public or protected, are fine") {
    auto r = run("this_ok", cls + "  [[lock(key=\"r:<this.region_>:<this.tenant()>\")]] virtual void f();\n};\n");
    expect_woven(r);
    CHECK_THAT(read(r.out_cpp), Catch::Contains("::weave::append_key(weave_rendered[0], (*this).region_);"));
  }
  SECTION("an unknown member") {
    auto r = run("this_unknown", cls + "  [[lock(key=\"r:<this.regoin_>\")]] virtual void f();\n};\n");
    expect_error(r, 12, 23, "no member named 'regoin_' in 'Svc'; did you mean 'region_'?");
  }
  SECTION("a private member") {
    auto r = run("this_private", cls + "  [[lock(key=\"r:<this.secret_>\")]] virtual void f();\n};\n");
    expect_error(r, 12, 23, "'secret_' is not an accessible member of 'Svc'");
  }
  SECTION("a method that is not const") {
    auto r = run("this_nonconst", cls + "  [[lock(key=\"r:<this.next_id()>\")]] virtual void f();\n};\n");
    expect_error(r, 12, 23, "'next_id' is not a const method of 'Svc'");
  }
  SECTION("a static method has no object") {
    auto r = run("this_static", cls + "  [[lock(key=\"r:<this.tenant()>\")]] static void f();\n};\n");
    expect_error(r, 12, 18, "'this' in a key template of static method 'Svc::f', which has no object");
  }
  SECTION("a free function has no object") {
    auto r = run("this_free", cls + "};\n[[lock(key=\"r:<this.x>\")]] void g();\n");
    expect_error(r, 13, 16, "'this' in a key template of free function 'g', which has no object");
  }
  SECTION("a decorator reaches only public members") {
    auto r = run("this_decorator", cls + "  [[lock(key=\"r:<this.region_>\")]] virtual void f() = 0;\n};\n");
    expect_error(r, 12, 23, "'region_' is protected in 'Svc', and the decorator reaches only public members");
  }
}

TEST_CASE("diagnostic: durations follow the runtime's one grammar (weave/duration.h)", "[codegen][declarations]") {
  auto minutes = run("duration_m", "struct C {\n  [[lock(ttl=5m)]] void f();\n};\n");  // line 2
  expect_error(minutes, 2, 14, "unknown duration unit 'm' (use ms, s, min or h)");
  auto too_long = run("duration_long", "struct C {\n  [[lock(ttl=87601h)]] void f();\n};\n");
  expect_error(too_long, 2, 14, "duration '87601h' is too long (at most 10 years)");
}

TEST_CASE("declarations: enum arguments carry their index in the vocabulary (interceptors switch on it)",
          "[codegen][declarations]") {
  auto r = run("enum_index", "struct C {\n  [[lock(on_busy=skip, type=write)]] void f();\n};\n");
  INFO(r.err);
  REQUIRE(r.exit == 0);
  const std::string cpp = read(r.out_cpp);
  CHECK_THAT(cpp, Catch::Contains("{\"on_busy\", ::weave::ArgValue::of_enum(\"skip\", 1)}"));
  CHECK_THAT(cpp, Catch::Contains("{\"type\", ::weave::ArgValue::of_enum(\"write\", 3)}"));
  CHECK_THAT(cpp, Catch::Contains("{\"release\", ::weave::ArgValue::of_enum(\"on_return\", 0)}"));  // a default
}
