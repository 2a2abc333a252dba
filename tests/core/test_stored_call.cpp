// Stored calls ([[delay]]: annotations whose vocabulary says "stores_call")
// as a worker runs them: detail::run_stored_call re-makes the call from its
// JSON and runs the interceptors after the one that stored it, then the
// method. MethodInfo and the codec are written by hand in the shape weavegen
// emits (the generated ones: tests/codegen/test_stored_call_run.cpp); a test
// interceptor stands in for delay.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "registered_interceptor.h"
#include "weave/generated.h"
#include "weave/json_codec.h"

namespace {

using weave::AnnotationSpec;
using weave::ArgSpec;
using weave::ArgValue;

// The woven object a worker serves, with its method's body and what it saw.
struct Shop {
  std::vector<std::string> trace;
  void cancel(const std::string& order_id, int attempt) {
    trace.push_back("cancel " + order_id + " " + std::to_string(attempt));
  }

  // What weavegen emits as the proxy's weave_encode_m0 / weave_decode_m0.
  static std::string encode(std::span<const weave::ArgRef> args) {
    return weave::detail::encode_stored_args<std::string, int>(args);
  }
  std::unique_ptr<weave::detail::DetachedCall> decode(std::string_view json) {
    auto copies = weave::detail::decode_stored_args<std::string, int>(json);
    auto& [order_id, attempt] = copies;
    std::string rendered[1];
    rendered[0] += "order:";
    weave::append_key(rendered[0], order_id);
    return weave::detail::detached_copy(
        weave::detail::detachable<void>(
            this, [this](auto& c0, auto& c1) -> void { return cancel(c0, c1); }, order_id, attempt),
        rendered);
  }
};

constexpr ArgSpec k_guard_args[] = {{"key", ArgValue::of_template(0)}};
// test_outer runs around the storing, test_store stores the call (the
// delay stand-in), test_guard runs with the method (the lock below delay).
constexpr AnnotationSpec k_annotations[] = {
    {"test_outer", -1, {}, 1, 3},
    {"test_store", 0, {}, 2, 3},
    {"test_guard", 0, k_guard_args, 3, 3},
};
constexpr std::string_view k_params[] = {"order_id", "attempt"};
constexpr std::string_view k_signature = "void shop::Shop::cancel(const std::basic_string<char>&, int)";
constexpr weave::StoredCallCodec k_codec{
    k_signature, weave::signature_hash(k_signature), /*annotation*/ 1, &Shop::encode,
    [](void* owner, std::string_view json) { return static_cast<Shop*>(owner)->decode(json); }};
constexpr weave::MethodInfo k_info{"shop::Shop::cancel", "shop.h", 4, k_annotations, k_params, nullptr, &k_codec};
constexpr weave::MethodInfo k_plain{"shop::Shop::plain", "shop.h", 5, k_annotations, k_params};


// test_outer and test_store just proceed: a replay starts below test_store;
// test_guard, the interceptor after it, does what a test says.
struct Chain {
  explicit Chain(std::function<void(weave::Invocation&)> guard_does) : guard("test_guard", std::move(guard_does)) {}
  Registered outer{"test_outer", [](weave::Invocation& inv) { inv.proceed(); }};
  Registered store{"test_store", [](weave::Invocation& inv) { inv.proceed(); }};
  Registered guard;
};

// The proxy's body: the chain around Shop::cancel.
void call_cancel(Shop& shop, const std::string& order_id, int attempt) {
  const weave::ArgRef args[] = {weave::ArgRef(order_id), weave::ArgRef(attempt)};
  std::string rendered[1];
  rendered[0] += "order:";
  weave::append_key(rendered[0], order_id);
  weave::detail::invoke<void>(k_info, args, rendered, [&] { shop.cancel(order_id, attempt); }, [] {});
}

// What run_stored_call says when it rejects `json` stored with `hash`:
// nothing after the storing interceptor ran, nor the method.
std::string rejection(std::uint64_t hash, std::string_view json) {
  bool ran = false;
  Chain chain([&](weave::Invocation& inv) {
    ran = true;
    inv.proceed();
  });
  Shop shop;
  std::string what;
  try {
    weave::detail::run_stored_call(k_info, &shop, hash, json);
    FAIL("a call that had to be rejected ran");
  } catch (const weave::StoredCallRejected& e) {
    CHECK_FALSE(e.retryable());
    CHECK(e.key() == "shop::Shop::cancel");
    what = e.what();
  }
  CHECK_FALSE(ran);
  CHECK(shop.trace.empty());
  return what;
}

}  // namespace

TEST_CASE("stored call: the storing interceptor encodes the call and returns, a worker runs the chain below it "
          "with the decoded arguments",
          "[core][stored_call]") {
  std::vector<std::string> trace;
  std::vector<std::string> stored;
  Registered outer("test_outer", [&](weave::Invocation& inv) {
    trace.push_back("outer");
    inv.proceed();
  });
  Registered store("test_store", [&](weave::Invocation& inv) {
    REQUIRE(inv.stored_call() == &k_codec);
    if (inv.replaying_stored_call()) return inv.proceed();
    trace.push_back("stored");
    stored.push_back(inv.stored_call()->encode(inv.args()));
  });
  Registered guard("test_guard", [&](weave::Invocation& inv) {
    trace.push_back(std::string("guard ") + std::string(inv.annotation().text("key")) +
                    (inv.replaying_stored_call() ? " replay" : " direct"));
    inv.proceed();
  });
  Shop shop;
  call_cancel(shop, "o-1", 2);
  CHECK(trace == std::vector<std::string>{"outer", "stored"});
  CHECK(shop.trace.empty());
  REQUIRE(stored == std::vector<std::string>{R"(["o-1",2])"});

  trace.clear();
  CHECK(weave::detail::run_stored_call(k_info, &shop, k_codec.signature_hash, stored[0]));
  CHECK(trace == std::vector<std::string>{"guard order:o-1 replay"});
  CHECK(shop.trace == std::vector<std::string>{"cancel o-1 2"});
}

TEST_CASE("stored call: an interceptor below the storing one that skips the method makes the run return false",
          "[core][stored_call]") {
  Chain chain([](weave::Invocation&) {});  // skips: on_busy=skip
  Shop shop;
  CHECK_FALSE(weave::detail::run_stored_call(k_info, &shop, k_codec.signature_hash, R"(["o-2",1])"));
  CHECK(shop.trace.empty());
}

TEST_CASE("stored call: an exception of the method reaches the worker", "[core][stored_call]") {
  Chain chain([](weave::Invocation&) { throw std::runtime_error("payment service down"); });
  Shop shop;
  CHECK_THROWS_WITH(weave::detail::run_stored_call(k_info, &shop, k_codec.signature_hash, R"(["o-3",1])"),
                    "payment service down");
}

TEST_CASE("stored call: another signature hash is rejected before anything runs, naming both and the signature",
          "[core][stored_call]") {
  const std::string what = rejection(
      weave::signature_hash("void shop::Shop::cancel(const std::basic_string<char>&, long)"), R"(["o-4",1])");
  CHECK_THAT(what, Catch::Contains("stored call of shop::Shop::cancel rejected: it was stored with signature hash 0x"));
  CHECK_THAT(what, Catch::Contains("'void shop::Shop::cancel(const std::basic_string<char>&, int)'): the method's "
                                   "parameters changed since, so its arguments would be misread"));
}

TEST_CASE("stored call: arguments that do not decode as the parameter types are rejected before anything runs",
          "[core][stored_call]") {
  struct Case {
    const char* json;
    const char* says;
  } cases[] = {
      {R"([1,2])", "type must be string"},
      {R"(["o-5"])", "expected a JSON array of 2 arguments, not array of 1"},
      {R"({"order_id":"o-5"})", "expected a JSON array of 2 arguments, not object"},
      {R"(["o-5",)", "parse error"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    const std::string what = rejection(k_codec.signature_hash, c.json);
    CHECK_THAT(what, Catch::Contains("its arguments do not decode as 'void shop::Shop::cancel(const "
                                     "std::basic_string<char>&, int)': "));
    CHECK_THAT(what, Catch::Contains(c.says));
  }
}

TEST_CASE("stored call: arguments nested deeper than JSON's bound are rejected unread", "[core][stored_call]") {
  const std::string deep = R"(["o-5",)" + std::string(100000, '[') + std::string(100000, ']') + "]";
  CHECK_THAT(rejection(k_codec.signature_hash, deep), Catch::Contains("nested more than 128 levels deep"));
  // Brackets inside strings are text, not nesting.
  const std::string in_text = R"([")" + std::string(1000, '[') + R"(", 3])";
  CHECK_FALSE(weave::detail::json_deeper_than(in_text, weave::detail::kMaxJsonDepth));
  CHECK(weave::detail::json_deeper_than("[[[1]]]", 2));
  CHECK_FALSE(weave::detail::json_deeper_than("[[[1]]]", 3));
  CHECK_FALSE(weave::detail::json_deeper_than(R"(["\"[[[["])", 2));
}

TEST_CASE("stored call: a method without a codec, or no object, is a usage error", "[core][stored_call]") {
  Shop shop;
  CHECK_THROWS_AS(weave::detail::run_stored_call(k_plain, &shop, k_codec.signature_hash, "[]"), weave::UsageError);
  CHECK_THROWS_AS(weave::detail::run_stored_call(k_info, nullptr, k_codec.signature_hash, R"(["o",1])"),
                  weave::UsageError);
}

TEST_CASE("stored call: the signature hash is FNV-1a 64, pinned, and changes with a parameter type",
          "[core][stored_call]") {
  // FNV-1a 64's published test vectors.
  STATIC_REQUIRE(weave::signature_hash("") == 0xcbf29ce484222325ull);
  STATIC_REQUIRE(weave::signature_hash("a") == 0xaf63dc4c8601ec8cull);
  STATIC_REQUIRE(weave::signature_hash("foobar") == 0x85944171f73967e8ull);
  // The documented [[delay]] example's method, as weavegen spells it: a stored call carries this value.
  STATIC_REQUIRE(weave::signature_hash("void shop::Orders::cancel_if_unpaid(const std::basic_string<char>&)") ==
                 0x9d79d2155d43681full);
  CHECK(weave::signature_hash("void shop::Orders::cancel_if_unpaid(const std::basic_string<char>&)") !=
        weave::signature_hash("void shop::Orders::cancel_if_unpaid(long)"));
}
