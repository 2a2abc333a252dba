// weave/annotation.h — one annotation on one method, as an interceptor sees it.
//
// weavegen validates every `[[name(arg=value, ...)]]` against the vocabulary
// in annotations/*.json, fills in defaults, and emits the arguments as static
// data. At run time an interceptor reads them with typed accessors:
//
//   void around(weave::Invocation& inv) override {
//     const weave::Annotation& a = inv.annotation();
//     std::string_view key = a.text("key");           // template, rendered for this call
//     auto ttl = a.has("ttl") ? a.duration("ttl") : 30s;
//     ...
//   }
//
// Asking for an argument the annotation does not have, or as the wrong kind,
// throws weave::UsageError naming the annotation and the argument.
#pragma once

#include "weave/abi.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weave/error.h"

namespace WEAVE_NAMESPACE {

// The duration value written as `forever` (e.g. `wait=forever`).
inline constexpr std::chrono::milliseconds forever = std::chrono::milliseconds::max();

// A rate argument as written, `rate=100/s`: `permits` per `per`.
struct ArgRate {
  std::int64_t permits = 0;
  std::chrono::milliseconds per{};
};

// One argument value exactly as weavegen emitted it (all compile-time data).
struct WEAVE_API ArgValue {
  enum class Kind { text, enumerator, duration, integer, boolean, key_template, key_template_list, rate,
                    exception_types };
  Kind kind = Kind::text;
  std::string_view text{};               // text, enumerator; key_template(_list): as written (",": a list)
  std::chrono::milliseconds duration{};  // duration (may be weave::forever); rate: its period
  std::int64_t integer = 0;              // integer, boolean (0/1), enumerator (its index in the vocabulary, or -1),
                                         // rate: its permits per period
  int first = 0, count = 0;              // key_template(_list): slots in the rendered array
  ExceptionMatcher matches = nullptr;    // exception_types (text: the types as written)

  static constexpr ArgValue of_text(std::string_view s) { return {Kind::text, s}; }
  // `index`: the value's position in the vocabulary's "values" (weavegen
  // emits it, so an interceptor can switch on it instead of comparing text).
  static constexpr ArgValue of_enum(std::string_view s, std::int64_t index = -1) {
    return {Kind::enumerator, s, {}, index};
  }
  static constexpr ArgValue of_duration_ms(std::int64_t ms) {
    return {Kind::duration, {}, std::chrono::milliseconds(ms)};
  }
  static constexpr ArgValue of_forever() { return {Kind::duration, {}, forever}; }
  static constexpr ArgValue of_integer(std::int64_t v) { return {Kind::integer, {}, {}, v}; }
  static constexpr ArgValue of_bool(bool v) { return {Kind::boolean, {}, {}, v ? 1 : 0}; }
  static constexpr ArgValue of_rate(std::int64_t permits, std::int64_t per_ms) {
    return {Kind::rate, {}, std::chrono::milliseconds(per_ms), permits};
  }
  // A key template rendered per call into slot `slot` of the call's
  // rendered texts; `source` as written (metrics label by it, never by a
  // rendered key).
  static constexpr ArgValue of_template(int slot, std::string_view source = {}) {
    return {Kind::key_template, source, {}, 0, slot, 1};
  }
  static constexpr ArgValue of_template_list(int first_slot, int n, std::string_view sources = {}) {
    return {Kind::key_template_list, sources, {}, 0, first_slot, n};
  }
  static constexpr ArgValue of_exception_types(ExceptionMatcher m, std::string_view written) {
    return {Kind::exception_types, written, {}, 0, 0, 0, m};
  }
};

struct WEAVE_API ArgSpec {
  std::string_view name;
  ArgValue value;
};

// An annotation as written on a method, after validation and defaults.
struct WEAVE_API AnnotationSpec {
  std::string_view name;  // "lock" (also for `weave::lock`)
  int order = 0;          // chain position: lower runs outer
  std::span<const ArgSpec> args;
  int line = 0, column = 0;  // where the attribute stands in the header
};

// An annotation plus the key templates rendered for the current call.
class WEAVE_API Annotation {
 public:
  Annotation(const AnnotationSpec& spec, std::span<const std::string> rendered)
      : spec_(&spec), rendered_(rendered) {}

  std::string_view name() const noexcept { return spec_->name; }
  int order() const noexcept { return spec_->order; }
  const AnnotationSpec& spec() const noexcept { return *spec_; }

  // True when the argument was written or has a default.
  bool has(std::string_view arg) const noexcept { return find(arg) != nullptr; }

  // Text, enumerator, or a key template rendered for this call.
  std::string_view text(std::string_view arg) const;
  // Every rendered template of a list argument (e.g. keys=[...]); a single
  // template argument gives a list of one.
  std::vector<std::string_view> texts(std::string_view arg) const;
  std::chrono::milliseconds duration(std::string_view arg) const;
  std::int64_t integer(std::string_view arg) const;
  bool boolean(std::string_view arg) const;
  ArgRate rate(std::string_view arg) const;
  // Whether an exception is of the types the argument names.
  ExceptionMatcher exception_types(std::string_view arg) const;
  // An enumerator's index in the vocabulary's "values" (-1 when unknown).
  std::int64_t enum_index(std::string_view arg) const;
  // An enumerator as its index in `values` (list them in the vocabulary's
  // order): weavegen's index, or found by text for specs written by hand.
  // Throws UsageError naming the annotation, the value, the choices and
  // `method` (when given) for any other value.
  std::size_t choice(std::string_view arg, std::span<const std::string_view> values,
                     std::string_view method = {}) const;
  std::size_t choice(std::string_view arg, std::initializer_list<std::string_view> values,
                     std::string_view method = {}) const {
    return choice(arg, std::span<const std::string_view>(values.begin(), values.size()), method);
  }
  // Key template slot `slot` (ArgValue::first + i) rendered for this call: for
  // interceptors that found their arguments once, in prepare().
  std::string_view rendered(int slot) const;

  const ArgValue* find(std::string_view arg) const noexcept;

 private:
  const ArgValue& require(std::string_view arg, std::initializer_list<ArgValue::Kind> kinds) const;
  const AnnotationSpec* spec_;
  std::span<const std::string> rendered_;
};

}  // namespace weave
