// weave/json_codec.h — a woven method's result as JSON: the ResultCodec
// (weave/result_codec.h) weavegen emits for methods whose annotations store
// results, over nlohmann/json's to_json / from_json found by ADL; and a
// stored call's arguments (encode/decode_stored_args, for the
// StoredCallCodec of weave/generated/stored_call.h).
//
//   struct Product { std::string id; int cents; };
//   NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Product, id, cents)   // makes Product storable
//
// std::optional<T>, std::shared_ptr<T> and std::unique_ptr<T> are storable
// when T is; their empty value is stored as JSON null and counts as empty().
// A type that is not storable fails the build with a static_assert that says
// what to add, instantiated from make_result_codec<the type>.
#pragma once

#include "weave/abi.h"

#include <concepts>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "weave/invocation.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE {
namespace detail {

// Stored or received JSON nested deeper than this is refused as malformed:
// nlohmann/json's dump() and conversions recurse per level, and a crafted
// payload would otherwise exhaust a worker's stack.
inline constexpr int kMaxJsonDepth = 128;

// True when `text` nests arrays and objects more than `max` deep (brackets
// inside strings do not count). Cheap: a text with fewer brackets than `max`
// is not scanned.
inline bool json_deeper_than(std::string_view text, int max) noexcept {
  std::size_t brackets = 0;
  for (char c : text) brackets += (c == '[') | (c == '{');
  if (brackets <= static_cast<std::size_t>(max)) return false;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// nlohmann::json::parse for stored or received text: throws
// std::invalid_argument when it nests deeper than kMaxJsonDepth,
// nlohmann::json::parse_error when it is not JSON.
inline nlohmann::json parse_stored_json(std::string_view text) {
  if (json_deeper_than(text, kMaxJsonDepth))
    throw std::invalid_argument("JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  return nlohmann::json::parse(text);
}

// A plain value: nlohmann/json converts it both ways (to_json / from_json
// found by ADL, or built in) and it can be copied.
template <class T>
concept JsonConvertible = std::copy_constructible<T> && std::is_assignable_v<nlohmann::json&, const T&> &&
                          requires(const nlohmann::json& j) { j.template get<T>(); };

template <class T>
struct Stored {  // a plain value
  static bool empty(const T&) { return false; }
  static void to_json(nlohmann::json& j, const T& v)
    requires JsonConvertible<T>
  { j = v; }
  static T from_json(const nlohmann::json& j)
    requires JsonConvertible<T>
  { return j.get<T>(); }
  static T copy(const T& v)
    requires std::copy_constructible<T>
  { return v; }
};
template <class R>
concept JsonStorable = requires(nlohmann::json& j, const R& v) {
  Stored<R>::to_json(j, v);
  { Stored<R>::from_json(j) } -> std::same_as<R>;
  { Stored<R>::copy(v) } -> std::same_as<R>;
};

template <class T>
  requires JsonStorable<T>
struct Stored<std::optional<T>> {
  static bool empty(const std::optional<T>& v) { return !v; }
  static void to_json(nlohmann::json& j, const std::optional<T>& v) {
    if (v) Stored<T>::to_json(j, *v); else j = nullptr;
  }
  static std::optional<T> from_json(const nlohmann::json& j) {
    if (j.is_null()) return std::nullopt;
    return Stored<T>::from_json(j);
  }
  static std::optional<T> copy(const std::optional<T>& v) { return v; }
};
template <class T>
  requires JsonStorable<std::remove_const_t<T>>
struct Stored<std::shared_ptr<T>> {
  static bool empty(const std::shared_ptr<T>& v) { return !v; }
  static void to_json(nlohmann::json& j, const std::shared_ptr<T>& v) {
    if (v) Stored<std::remove_const_t<T>>::to_json(j, *v); else j = nullptr;
  }
  static std::shared_ptr<T> from_json(const nlohmann::json& j) {
    if (j.is_null()) return nullptr;
    return std::make_shared<T>(Stored<std::remove_const_t<T>>::from_json(j));
  }
  static std::shared_ptr<T> copy(const std::shared_ptr<T>& v) { return v; }  // T is shared as it was
};
template <class T>
  requires JsonStorable<T>
struct Stored<std::unique_ptr<T>> {
  static bool empty(const std::unique_ptr<T>& v) { return !v; }
  static void to_json(nlohmann::json& j, const std::unique_ptr<T>& v) {
    if (v) Stored<T>::to_json(j, *v); else j = nullptr;
  }
  static std::unique_ptr<T> from_json(const nlohmann::json& j) {
    if (j.is_null()) return nullptr;
    return std::make_unique<T>(Stored<T>::from_json(j));
  }
  static std::unique_ptr<T> copy(const std::unique_ptr<T>& v) { return v ? std::make_unique<T>(*v) : nullptr; }
};


// The slot detail::invoke keeps a result in (std::optional<R>): see generated.h.
template <class R>
std::optional<R>& slot_of(void* slot) { return *static_cast<std::optional<R>*>(slot); }

template <class R>
constexpr ResultCodec make_result_codec(std::string_view type_name) {
  static_assert(JsonStorable<R>,
                "weave: this method's result is stored as JSON ([[cache]], [[dedupe(on_duplicate=replay)]]), "
                "but its type has no nlohmann/json conversion: declare to_json/from_json for it next to the type "
                "(e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE), and make it copyable. The type is named in the "
                "'required from' line below.");
  return ResultCodec{
      type_name,
      &typeid(R),
      [](const void* r) {
        nlohmann::json j;
        Stored<R>::to_json(j, *static_cast<const R*>(r));
        return j.dump();
      },
      [](std::string_view text, void* slot) {
        slot_of<R>(slot).emplace(Stored<R>::from_json(parse_stored_json(text)));
      },
      [](const void* r) -> std::shared_ptr<const void> {
        return std::make_shared<const R>(Stored<R>::copy(*static_cast<const R*>(r)));
      },
      [](void* slot, const void* shared) { slot_of<R>(slot).emplace(Stored<R>::copy(*static_cast<const R*>(shared))); },
      [](const void* r) { return Stored<R>::empty(*static_cast<const R*>(r)); },
      [](const void* slot) -> const void* {
        const auto& value = *static_cast<const std::optional<R>*>(slot);
        return value ? &*value : nullptr;
      },
  };
}

// ---- stored calls ([[delay]]: weave/generated/stored_call.h) ----
// A stored call's arguments, A... being the parameter types without
// references and cv, as one JSON array.
template <class... A>
std::string encode_stored_args(std::span<const ArgRef> args) {
  static_assert((JsonStorable<A> && ...),
                "weave: this method's calls are stored as JSON to run later ([[delay]]), but a parameter type has "
                "no nlohmann/json conversion: declare to_json/from_json for it next to the type (e.g. "
                "NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE), and make it copyable. The type is named in the 'required "
                "from' line below.");
  if (args.size() != sizeof...(A))
    throw UsageError("a stored call was given " + std::to_string(args.size()) + " arguments for " +
                     std::to_string(sizeof...(A)) + " parameters");
  nlohmann::json out = nlohmann::json::array();
  std::size_t i = 0;
  auto put = [&](const auto* value) {
    if (!value)
      throw UsageError("argument " + std::to_string(i) + " of a stored call is not of its parameter's type (" +
                       args[i].type().name() + ")");
    nlohmann::json j;
    Stored<std::remove_cvref_t<decltype(*value)>>::to_json(j, *value);
    out.push_back(std::move(j));
    ++i;
  };
  (put(args[i].template get<A>()), ...);
  (void)put;  // no parameters: never called
  return out.dump();
}

// The arguments encode_stored_args wrote, decoded. Throws
// nlohmann::json::exception, or std::invalid_argument when it is not an
// array of one element per parameter.
template <class... A>
std::tuple<A...> decode_stored_args(std::string_view json) {
  const nlohmann::json j = parse_stored_json(json);
  if (!j.is_array() || j.size() != sizeof...(A))
    throw std::invalid_argument("expected a JSON array of " + std::to_string(sizeof...(A)) + " arguments, not " +
                                std::string(j.type_name()) + (j.is_array() ? " of " + std::to_string(j.size()) : ""));
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple<A...>{Stored<A>::from_json(j[I])...};
  }(std::index_sequence_for<A...>{});
}

}  // namespace detail
}  // namespace weave
