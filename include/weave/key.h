// weave/key.h — how a value becomes text inside a key template.
//
// weavegen turns `key="order:<order.id>"` into code that calls
// weave::append_key(out, order.id). Supported out of the box: integers,
// floating point, bool, strings, string views, C strings, enums (as their
// underlying integer). Any other type needs one of:
//
//   std::string weave_key(const Money& m);          // found by ADL, preferred
//   std::ostream& operator<<(std::ostream&, const Money&);
//
// A type with neither is a compile error naming the type.
#pragma once

#include "weave/abi.h"

#include <charconv>
#include <concepts>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

namespace WEAVE_NAMESPACE {

namespace key_detail {
template <class T>
concept HasWeaveKey = requires(const T& v) {
  { weave_key(v) } -> std::convertible_to<std::string_view>;
};
template <class T>
concept Streamable = requires(std::ostream& os, const T& v) { os << v; };
template <class T>
concept StringLike = std::convertible_to<const T&, std::string_view>;
}  // namespace key_detail

// True when append_key accepts T (weavegen relies on the same rules).
template <class T>
inline constexpr bool is_key_formattable_v =
    std::is_arithmetic_v<T> || std::is_enum_v<T> || key_detail::StringLike<T> ||
    key_detail::HasWeaveKey<T> || key_detail::Streamable<T>;

template <class T>
void append_key(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (key_detail::HasWeaveKey<T>) {
    out += std::string_view(weave_key(value));
  } else if constexpr (key_detail::StringLike<T>) {
    out += std::string_view(value);
  } else if constexpr (std::is_enum_v<T>) {
    append_key(out, static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_integral_v<T>) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
    out.append(buf, r.ptr);
  } else if constexpr (key_detail::Streamable<T>) {
    std::ostringstream os;
    os << value;
    out += os.str();
  } else {
    static_assert(is_key_formattable_v<T>,
                  "weave: this type cannot be used in a key template; "
                  "give it `std::string weave_key(const T&)` (found by ADL) or operator<<");
  }
}

}  // namespace weave
