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
//
// In a template that names stored state (a lock key, a cache name or key, a
// dedupe key: the vocabulary's "names_state"), a value's text is written by
// append_key with its reserved characters (key_reserved: % : / | , { })
// %-encoded, upper-case hex, so that two calls whose values differ never
// render one name: `pay:<user>:<id>` renders ("a:b", "c") as "pay:a%3Ab:c"
// and ("a", "b:c") as "pay:a:b%3Ac", and no value can forge a Redis Cluster
// hash tag; weavegen requires a reserved character in the text between two
// of its placeholders. Text without reserved characters (numbers, ids, UUIDs,
// e-mail addresses) renders as it is. Any other template (a message of an
// annotation of your own) renders values as they are (append_text).
#pragma once

#include "weave/abi.h"

#include <charconv>
#include <optional>
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

// The characters a value in a key is never rendered with as they are.
inline constexpr std::string_view key_reserved = "%:/|,{}";

// Appends `text` with each character of `reserved` written as %XX (and
// nothing else changed): the one encoder of keys and of the names Weave's
// layouts join with them.
inline void append_percent_encoded(std::string& out, std::string_view text, std::string_view reserved = key_reserved) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::size_t from = 0;
  for (std::size_t at; (at = text.find_first_of(reserved, from)) != std::string_view::npos; from = at + 1) {
    const auto c = static_cast<unsigned char>(text[at]);
    out.append(text.data() + from, at - from);
    out += '%';
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  out.append(text.data() + from, text.size() - from);
}

// append_percent_encoded's inverse: `text` with each %XX decoded; none when
// a '%' is not followed by two hex digits.
inline std::optional<std::string> percent_decoded(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0) return std::nullopt;
    out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
    i += 2;
  }
  return out;
}

namespace key_detail {
// The value's text, its reserved characters %-encoded when Encode.
template <bool Encode, class T>
void append(std::string& out, const T& value) {
  auto put = [&out](std::string_view text) {
    if constexpr (Encode)
      append_percent_encoded(out, text);
    else
      out += text;
  };
  (void)put;  // (not every branch writes text)
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? "true" : "false";
  } else if constexpr (key_detail::HasWeaveKey<T>) {
    put(std::string_view(weave_key(value)));
  } else if constexpr (key_detail::StringLike<T>) {
    put(std::string_view(value));
  } else if constexpr (std::is_enum_v<T>) {
    append<Encode>(out, static_cast<std::underlying_type_t<T>>(value));
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
    put(os.str());
  } else {
    static_assert(is_key_formattable_v<T>,
                  "weave: this type cannot be used in a key template; "
                  "give it `std::string weave_key(const T&)` (found by ADL) or operator<<");
  }
}
}  // namespace key_detail

// A value as a key template that names stored state renders it (a lock key,
// a cache name, a dedupe key): its reserved characters %-encoded.
template <class T>
void append_key(std::string& out, const T& value) {
  key_detail::append<true>(out, value);
}

// A value as text, as any other template renders it (a message of an
// annotation of your own): the same formatting, nothing encoded.
template <class T>
void append_text(std::string& out, const T& value) {
  key_detail::append<false>(out, value);
}

}  // namespace weave
