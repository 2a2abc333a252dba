// Methods guarded by [[dedupe]], their MethodInfo written by hand in the shape
// weavegen emits, so the dedupe suite runs without weavegen. Slot 0 of the
// rendered texts is the key, slot 1 the match value.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "weave/generated.h"
#include "weave/json_codec.h"

namespace shop {
struct Receipt {
  std::string id;
  int cents = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Receipt, id, cents)

// Stores as JSON, but its to_json throws: a result that cannot be recorded.
struct Unstorable {
  int n = 0;
};
inline void to_json(nlohmann::json&, const Unstorable&) { throw std::runtime_error("cannot serialize Unstorable"); }
inline void from_json(const nlohmann::json& j, Unstorable& u) { u.n = j.get<int>(); }
}  // namespace shop

namespace dedupe_test {

using weave::AnnotationSpec;
using weave::ArgSpec;
using weave::ArgValue;

inline constexpr weave::ResultCodec k_receipt_codec = weave::detail::make_result_codec<shop::Receipt>("shop::Receipt");
inline constexpr weave::ResultCodec k_optional_codec =
    weave::detail::make_result_codec<std::optional<shop::Receipt>>("std::optional<shop::Receipt>");
inline constexpr weave::ResultCodec k_unstorable_codec = weave::detail::make_result_codec<shop::Unstorable>("shop::Unstorable");

#define DEDUPE_ARGS(id, ...)                                                                               \
  inline constexpr ArgSpec id##_args[] = {{"key", ArgValue::of_template(0)}, {"match", ArgValue::of_template(1)}, \
                                          __VA_ARGS__};                                                     \
  inline constexpr AnnotationSpec id[] = {{"dedupe", 0, id##_args, 1, 1}};

DEDUPE_ARGS(k_throw, {"window", ArgValue::of_duration_ms(10'000)}, {"message", ArgValue::of_text("already submitted")})
DEDUPE_ARGS(k_replay, {"window", ArgValue::of_duration_ms(10'000)}, {"on_duplicate", ArgValue::of_enum("replay", 2)})
DEDUPE_ARGS(k_replay_wait, {"window", ArgValue::of_duration_ms(10'000)},
            {"on_duplicate", ArgValue::of_enum("replay", 2)}, {"wait", ArgValue::of_duration_ms(5'000)})
DEDUPE_ARGS(k_skip, {"window", ArgValue::of_duration_ms(10'000)}, {"on_duplicate", ArgValue::of_enum("skip", 1)})
DEDUPE_ARGS(k_remember, {"window", ArgValue::of_duration_ms(10'000)}, {"on_error", ArgValue::of_enum("remember", 1)})
DEDUPE_ARGS(k_short, {"window", ArgValue::of_duration_ms(300)}, {"on_duplicate", ArgValue::of_enum("replay", 2)})
DEDUPE_ARGS(k_zero_window, {"window", ArgValue::of_duration_ms(0)})
#undef DEDUPE_ARGS

enum class Guard { fail, replay, replay_wait, skip, remember, short_window, zero_window };

inline const weave::MethodInfo& info(Guard g) {
  static constexpr weave::MethodInfo fail{"shop::Payments::pay", "payments.h", 1, k_throw, {}, &k_receipt_codec};
  static constexpr weave::MethodInfo replay{"shop::Payments::pay", "payments.h", 1, k_replay, {}, &k_receipt_codec};
  static constexpr weave::MethodInfo replay_wait{"shop::Payments::pay", "payments.h", 1, k_replay_wait, {},
                                                 &k_receipt_codec};
  static constexpr weave::MethodInfo remember{"shop::Payments::pay", "payments.h", 1, k_remember, {}, &k_receipt_codec};
  static constexpr weave::MethodInfo short_window{"shop::Payments::pay", "payments.h", 1, k_short, {}, &k_receipt_codec};
  static constexpr weave::MethodInfo zero_window{"shop::Payments::pay", "payments.h", 1, k_zero_window, {},
                                                 &k_receipt_codec};
  switch (g) {
    case Guard::replay: return replay;
    case Guard::replay_wait: return replay_wait;
    case Guard::remember: return remember;
    case Guard::short_window: return short_window;
    case Guard::zero_window: return zero_window;
    default: return fail;
  }
}

// A payment service whose calls are counted; `body` replaces the payment.
struct Payments {
  std::function<shop::Receipt(const std::string&)> body;
  std::atomic<int> runs{0};

  shop::Receipt pay(const std::string& key, Guard g = Guard::fail, const std::string& match = "") {
    const std::string rendered[2] = {key, match};
    return weave::detail::invoke<shop::Receipt>(
        info(g), {}, rendered,
        [&] {
          ++runs;
          return body ? body(key) : shop::Receipt{"r-" + std::to_string(runs.load()), 100};
        },
        weave::detail::CannotSkip{});
  }
  std::optional<shop::Receipt> pay_once(const std::string& key) {
    static constexpr weave::MethodInfo skip{"shop::Payments::pay_once", "payments.h", 2, k_skip, {}, &k_optional_codec};
    const std::string rendered[2] = {key, ""};
    return weave::detail::invoke<std::optional<shop::Receipt>>(
        skip, {}, rendered,
        [&]() -> std::optional<shop::Receipt> {
          ++runs;
          return shop::Receipt{"once", 1};
        },
        [] { return std::optional<shop::Receipt>(); });
  }
  shop::Unstorable unstorable(const std::string& key) {
    static constexpr weave::MethodInfo rep{"shop::Payments::unstorable", "payments.h", 3, k_replay, {},
                                           &k_unstorable_codec};
    const std::string rendered[2] = {key, ""};
    return weave::detail::invoke<shop::Unstorable>(
        rep, {}, rendered,
        [&] {
          ++runs;
          return shop::Unstorable{7};
        },
        weave::detail::CannotSkip{});
  }
};

}  // namespace dedupe_test
