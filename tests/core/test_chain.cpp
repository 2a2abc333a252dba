// The interceptor chain as generated proxies drive it: order, proceed, skip,
// annotation access and registry errors. MethodInfo constants are written by
// hand here in the shape weavegen emits.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weave/generated.h"

using weave::ArgSpec;
using weave::ArgValue;
using weave::AnnotationSpec;

namespace {

constexpr ArgSpec k_outer_args[] = {{"event", ArgValue::of_text("outer")}};
constexpr ArgSpec k_inner_args[] = {
    {"event", ArgValue::of_template(0)},
    {"limit", ArgValue::of_integer(7)},
    {"timeout", ArgValue::of_duration_ms(250)},
    {"strict", ArgValue::of_bool(true)},
    {"mode", ArgValue::of_enum("fast")},
};
constexpr AnnotationSpec k_two[] = {
    {"test_outer", 0, k_outer_args, 10, 3},
    {"test_inner", 5, k_inner_args, 11, 3},
};
constexpr std::string_view k_params[] = {"order_id", "cents"};
constexpr weave::MethodInfo k_info{"shop::Svc::pay", "svc.h", 12, k_two, k_params};

struct Registered {
  explicit Registered(std::string name, std::function<void(weave::Invocation&)> f) : name_(name) {
    weave::InterceptorRegistry::global().add(std::move(name), std::move(f));
  }
  ~Registered() { weave::InterceptorRegistry::global().remove(name_); }
  std::string name_;
};

int call_pay(const std::string& order_id, int cents, std::vector<std::string>& trace) {
  const weave::ArgRef args[] = {weave::ArgRef(order_id), weave::ArgRef(cents)};
  std::string rendered[1];
  rendered[0] += "order:";
  weave::append_key(rendered[0], order_id);
  return weave::detail::invoke<int>(
      k_info, args, rendered,
      [&]() -> int {
        trace.push_back("target");
        return cents * 2;
      },
      weave::detail::CannotSkip{});
}

}  // namespace

TEST_CASE("interceptors run around the target in annotation order") {
  std::vector<std::string> trace;
  Registered outer("test_outer", [&](weave::Invocation& inv) {
    trace.push_back("outer:" + std::string(inv.annotation().text("event")));
    inv.proceed();
    trace.push_back("outer-after");
  });
  Registered inner("test_inner", [&](weave::Invocation& inv) {
    trace.push_back("inner:" + std::string(inv.annotation().text("event")));
    inv.proceed();
    trace.push_back("inner-after");
  });
  CHECK(call_pay("o-1", 21, trace) == 42);
  CHECK(trace == std::vector<std::string>{"outer:outer", "inner:order:o-1", "target",
                                          "inner-after", "outer-after"});
}

TEST_CASE("an invocation exposes the method, its arguments and typed annotation arguments") {
  std::vector<std::string> trace;
  Registered outer("test_outer", [](weave::Invocation& inv) { inv.proceed(); });
  Registered inner("test_inner", [&](weave::Invocation& inv) {
    CHECK(inv.method() == "shop::Svc::pay");
    CHECK(inv.file() == "svc.h");
    CHECK(inv.arg_count() == 2);
    CHECK(inv.arg_name(0) == "order_id");
    REQUIRE(inv.arg(0).get<std::string>() != nullptr);
    CHECK(*inv.arg(0).get<std::string>() == "o-9");
    CHECK(inv.arg(0).get<int>() == nullptr);
    CHECK(inv.arg(1).text() == "5");
    const weave::Annotation& a = inv.annotation();
    CHECK(a.name() == "test_inner");
    CHECK(a.order() == 5);
    CHECK(a.integer("limit") == 7);
    CHECK(a.duration("timeout") == std::chrono::milliseconds(250));
    CHECK(a.boolean("strict"));
    CHECK(a.text("mode") == "fast");
    CHECK(a.texts("event") == std::vector<std::string_view>{"order:o-9"});
    CHECK_FALSE(a.has("missing"));
    CHECK_THROWS_AS(a.integer("missing"), weave::UsageError);
    CHECK_THROWS_WITH(a.integer("mode"), Catch::Contains("'mode'") && Catch::Contains("test_inner"));
    CHECK_THROWS_AS(inv.arg(2), weave::UsageError);
    inv.proceed();
    CHECK(inv.proceeded());
    CHECK_THROWS_AS(inv.proceed(), weave::UsageError);  // the target runs once
  });
  CHECK(call_pay("o-9", 5, trace) == 10);
}

TEST_CASE("an interceptor that does not proceed skips the method") {
  std::vector<std::string> trace;
  Registered outer("test_outer", [](weave::Invocation& inv) { inv.proceed(); });
  Registered inner("test_inner", [](weave::Invocation&) {});

  SECTION("a value-returning method without fallback reports a usage error") {
    CHECK_THROWS_WITH(call_pay("o-1", 1, trace),
                      Catch::Contains("shop::Svc::pay") && Catch::Contains("cannot skip"));
  }
  SECTION("std::optional returns nullopt, a fallback's result is returned") {
    const weave::ArgRef no_args[1] = {weave::ArgRef(0)};
    auto opt = weave::detail::invoke<std::optional<int>>(
        k_info, std::span(no_args, 0), {}, [&] { return std::optional<int>(1); },
        [] { return std::optional<int>(); });
    CHECK_FALSE(opt.has_value());
    int fb = weave::detail::invoke<int>(k_info, std::span(no_args, 0), {}, [] { return 1; },
                                        [] { return -1; });
    CHECK(fb == -1);
  }
  CHECK(trace.empty());
}

TEST_CASE("exceptions from the target pass through every interceptor") {
  std::vector<std::string> trace;
  Registered outer("test_outer", [&](weave::Invocation& inv) {
    try {
      inv.proceed();
    } catch (const std::runtime_error&) {
      trace.push_back("outer saw it");
      throw;
    }
  });
  Registered inner("test_inner", [](weave::Invocation& inv) { inv.proceed(); });
  const weave::ArgRef none[1] = {weave::ArgRef(0)};
  CHECK_THROWS_AS(weave::detail::invoke<void>(
                      k_info, std::span(none, 0), {}, [] { throw std::runtime_error("boom"); },
                      [] {}),
                  std::runtime_error);
  CHECK(trace == std::vector<std::string>{"outer saw it"});
}

TEST_CASE("reference returns come back as the same object") {
  Registered outer("test_outer", [](weave::Invocation& inv) { inv.proceed(); });
  Registered inner("test_inner", [](weave::Invocation& inv) { inv.proceed(); });
  int storage = 3;
  const weave::ArgRef none[1] = {weave::ArgRef(0)};
  int& r = weave::detail::invoke<int&>(k_info, std::span(none, 0), {},
                                       [&]() -> int& { return storage; }, weave::detail::CannotSkip{});
  CHECK(&r == &storage);
}

TEST_CASE("a call needing an unregistered annotation names it and the method") {
  constexpr static AnnotationSpec k_unknown[] = {{"never_registered", 0, {}, 4, 1}};
  constexpr static weave::MethodInfo info{"ns::f", "f.h", 5, k_unknown, {}};
  bool ran = false;
  CHECK_THROWS_WITH(
      weave::detail::invoke<void>(info, {}, {}, [&] { ran = true; }, [] {}),
      Catch::Contains("never_registered") && Catch::Contains("ns::f") && Catch::Contains("f.h:4"));
  CHECK_FALSE(ran);
}

TEST_CASE("replacing an interceptor takes effect on the next call") {
  std::vector<std::string> trace;
  Registered outer("test_outer", [&](weave::Invocation& inv) {
    trace.push_back("v1");
    inv.proceed();
  });
  Registered inner("test_inner", [](weave::Invocation& inv) { inv.proceed(); });
  call_pay("a", 1, trace);
  weave::InterceptorRegistry::global().add("test_outer", [&](weave::Invocation& inv) {
    trace.push_back("v2");
    inv.proceed();
  });
  call_pay("a", 1, trace);
  CHECK(trace == std::vector<std::string>{"v1", "target", "v2", "target"});
}

TEST_CASE("an Invocation made by hand is safe: proceed() runs its target, or refuses a null one") {
  int ran = 0;
  auto target = [](void* p) { ++*static_cast<int*>(p); };
  weave::Invocation inv(k_info, {}, {}, target, &ran);
  CHECK_THROWS_AS(inv.annotation(), weave::UsageError);  // no interceptor is running
  inv.proceed();
  CHECK(ran == 1);
  CHECK(inv.proceeded());
  CHECK_THROWS_AS(inv.proceed(), weave::UsageError);  // once only

  weave::Invocation no_target(k_info, {}, {}, nullptr, nullptr);
  CHECK_THROWS_AS(no_target.proceed(), weave::UsageError);
}

TEST_CASE("prepare() runs once per method, and around() reads what it made") {
  struct Parsed {
    std::int64_t mode_index;
    std::chrono::milliseconds timeout;
  };
  struct Preparing final : weave::Interceptor {
    int prepared = 0;
    std::vector<std::int64_t> seen;
    std::shared_ptr<const void> prepare(const weave::AnnotationSpec& spec) override {
      ++prepared;
      const weave::Annotation a(spec, {});
      return std::make_shared<const Parsed>(Parsed{a.enum_index("mode"), a.duration("timeout")});
    }
    void around(weave::Invocation& inv) override {
      const Parsed* p = inv.prepared<Parsed>();
      seen.push_back(p ? p->mode_index * 1000 + p->timeout.count() : -1);
      inv.proceed();
    }
  };
  static constexpr ArgSpec args[] = {{"mode", ArgValue::of_enum("fast", 1)},
                                     {"timeout", ArgValue::of_duration_ms(250)}};
  static constexpr AnnotationSpec spec[] = {{"test_preparing", 0, args, 1, 1}};
  static constexpr weave::MethodInfo info{"shop::Svc::prep", "svc.h", 1, spec, {}};
  auto interceptor = std::make_shared<Preparing>();
  weave::InterceptorRegistry::global().add("test_preparing", interceptor);
  for (int i = 0; i < 3; ++i)
    CHECK(weave::detail::invoke<int>(info, {}, {}, [] { return 7; }, weave::detail::CannotSkip{}) == 7);
  weave::InterceptorRegistry::global().remove("test_preparing");
  CHECK(interceptor->prepared == 1);
  CHECK(interceptor->seen == std::vector<std::int64_t>{1250, 1250, 1250});
}

TEST_CASE("an error prepare() throws fails the call before any interceptor runs, naming the annotation, the method "
          "and where the annotation stands") {
  struct Refusing final : weave::Interceptor {
    std::shared_ptr<const void> prepare(const weave::AnnotationSpec&) override {
      throw weave::UsageError("test_refusing mode='sideways' is not one of up, down");
    }
    void around(weave::Invocation& inv) override { inv.proceed(); }
  };
  std::vector<std::string> trace;
  Registered outer("test_outer", [&](weave::Invocation& inv) {
    trace.push_back("outer");
    inv.proceed();
  });
  weave::InterceptorRegistry::global().add("test_refusing", std::make_shared<Refusing>());
  static constexpr AnnotationSpec spec[] = {{"test_outer", 0, {}, 3, 3}, {"test_refusing", 1, {}, 4, 3}};
  static constexpr weave::MethodInfo info{"shop::Svc::refused", "svc.h", 5, spec, {}};
  CHECK_THROWS_MATCHES(
      weave::detail::invoke<void>(info, {}, {}, [&] { trace.push_back("target"); }, weave::detail::CannotSkip{}),
      weave::UsageError,
      Catch::Matchers::Message("weave: test_refusing mode='sideways' is not one of up, down (test_refusing on "
                               "shop::Svc::refused at svc.h:4)"));
  weave::InterceptorRegistry::global().remove("test_refusing");
  CHECK(trace.empty());
}
