// A Catalog with [[cache]], [[cache_put]] and [[cache_evict]] methods, its
// MethodInfo constants written by hand in the shape weavegen emits, so the
// cache suite runs without weavegen. Each method takes the cache name at run
// time through a `name` argument rendered as text.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "eventually.h"
#include "weave/generated.h"
#include "weave/json_codec.h"

namespace shop {
struct Product {
  std::string id;
  int cents = 0;
  friend bool operator==(const Product&, const Product&) = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Product, id, cents)
}  // namespace shop

namespace cache_test {

using weave::ArgSpec;
using weave::ArgValue;
using weave::AnnotationSpec;
using Found = std::optional<shop::Product>;

inline constexpr weave::ResultCodec k_found_codec = weave::detail::make_result_codec<Found>("std::optional<shop::Product>");
inline constexpr weave::ResultCodec k_product_codec = weave::detail::make_result_codec<shop::Product>("shop::Product");
inline constexpr weave::ResultCodec k_int_codec = weave::detail::make_result_codec<int>("int");

// Slot 0: the cache name; slot 1: the key.
inline constexpr ArgSpec k_find_args[] = {{"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}};
inline constexpr ArgSpec k_find_null0_args[] = {
    {"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}, {"null_ttl", ArgValue::of_duration_ms(0)}};
inline constexpr ArgSpec k_find_local_args[] = {
    {"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}, {"tier", ArgValue::of_enum("local", 1)}};
inline constexpr ArgSpec k_find_remote_args[] = {
    {"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}, {"tier", ArgValue::of_enum("remote", 2)}};
inline constexpr ArgSpec k_find_sync_args[] = {
    {"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}, {"sync", ArgValue::of_bool(true)}};
// refresh_after: long enough that no stall of a loaded machine ages a value
// a test has just loaded, short enough to wait for.
inline constexpr long long k_refresh_after_ms = 2000;
inline constexpr ArgSpec k_find_refresh_args[] = {{"name", ArgValue::of_template(0)},
                                                  {"key", ArgValue::of_template(1)},
                                                  {"refresh_after", ArgValue::of_duration_ms(k_refresh_after_ms)}};
inline constexpr ArgSpec k_price_args[] = {{"name", ArgValue::of_template(0)}};  // no key=: all arguments
inline constexpr ArgSpec k_put_args[] = {{"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}};
inline constexpr ArgSpec k_evict_args[] = {{"name", ArgValue::of_template(0)}, {"key", ArgValue::of_template(1)}};
inline constexpr ArgSpec k_evict_all_args[] = {{"name", ArgValue::of_template(0)}, {"all", ArgValue::of_bool(true)}};

inline constexpr AnnotationSpec k_find[] = {{"cache", 0, k_find_args, 1, 1}};
inline constexpr AnnotationSpec k_find_null0[] = {{"cache", 0, k_find_null0_args, 1, 1}};
inline constexpr AnnotationSpec k_find_local[] = {{"cache", 0, k_find_local_args, 1, 1}};
inline constexpr AnnotationSpec k_find_remote[] = {{"cache", 0, k_find_remote_args, 1, 1}};
inline constexpr AnnotationSpec k_find_sync[] = {{"cache", 0, k_find_sync_args, 1, 1}};
inline constexpr AnnotationSpec k_find_refresh[] = {{"cache", 0, k_find_refresh_args, 1, 1}};
inline constexpr AnnotationSpec k_price[] = {{"cache", 0, k_price_args, 5, 1}};
inline constexpr AnnotationSpec k_put[] = {{"cache_put", 0, k_put_args, 2, 1}};
inline constexpr AnnotationSpec k_evict[] = {{"cache_evict", 0, k_evict_args, 3, 1}};
inline constexpr AnnotationSpec k_evict_all[] = {{"cache_evict", 0, k_evict_all_args, 4, 1}};

// refresh: a proxy that can copy the call, as weavegen's does for
// refresh_after (the reload runs in the background); refresh_uncopied: the
// same method through a call that cannot be copied (as when its object is
// being destroyed: the claimer drops its claim).
enum class Find { both, null0, local, remote, sync, refresh, refresh_uncopied };

inline const weave::MethodInfo& find_info(Find f) {
  static constexpr weave::MethodInfo both{"shop::Catalog::find", "catalog.h", 1, k_find, {}, &k_found_codec};
  static constexpr weave::MethodInfo null0{"shop::Catalog::find", "catalog.h", 1, k_find_null0, {}, &k_found_codec};
  static constexpr weave::MethodInfo local{"shop::Catalog::find", "catalog.h", 1, k_find_local, {}, &k_found_codec};
  static constexpr weave::MethodInfo remote{"shop::Catalog::find", "catalog.h", 1, k_find_remote, {}, &k_found_codec};
  static constexpr weave::MethodInfo sync{"shop::Catalog::find", "catalog.h", 1, k_find_sync, {}, &k_found_codec};
  static constexpr weave::MethodInfo refresh{"shop::Catalog::find", "catalog.h", 1, k_find_refresh, {}, &k_found_codec};
  switch (f) {
    case Find::sync: return sync;
    case Find::refresh:
    case Find::refresh_uncopied: return refresh;
    case Find::null0: return null0;
    case Find::local: return local;
    case Find::remote: return remote;
    default: return both;
  }
}

// A catalog in memory whose reads and writes are counted; `body` runs in
// place of the real find (e.g. to block a load).
struct Catalog {
  std::function<Found(const std::string&)> body;
  std::atomic<int> finds{0};

  Catalog() = default;
  Catalog(const Catalog&) = delete;
  // What weavegen's proxy destructor does: background reloads on this object end first.
  ~Catalog() { weave::detail::retire_detached(this); }

  Found load(const std::string& id) {
    ++finds;
    return body ? body(id) : Found(shop::Product{id, 100});
  }
  Found find(const std::string& name, const std::string& id, Find f = Find::both) {
    const std::string rendered[2] = {name, id};
    auto target = [&]() -> Found { return load(id); };
    if (f == Find::refresh)  // what weavegen emits for refresh_after: a way to re-make the call from copies
      return weave::detail::invoke<Found>(
          find_info(f), {}, rendered, target, weave::detail::CannotSkip{},
          weave::detail::detachable<Found>(
              this, [this](const std::string&, const std::string& copied_id) -> Found { return load(copied_id); },
              name, id));
    return weave::detail::invoke<Found>(find_info(f), {}, rendered, target, weave::detail::CannotSkip{});
  }
  // Another [[cache]] method on the same name and keys, of another type.
  std::atomic<int> counts{0};
  int count(const std::string& name, const std::string& id) {
    static constexpr weave::MethodInfo info{"shop::Catalog::count", "catalog.h", 6, k_find, {}, &k_int_codec};
    const std::string rendered[2] = {name, id};
    return weave::detail::invoke<int>(
        info, {}, rendered,
        [&] {
          ++counts;
          return 7;
        },
        weave::detail::CannotSkip{});
  }

  std::atomic<int> prices{0};
  Found price(const std::string& name, const std::string& sku, int qty) {
    static constexpr weave::MethodInfo info{"shop::Catalog::price", "catalog.h", 5, k_price, {}, &k_found_codec};
    const weave::ArgRef args[] = {weave::ArgRef(sku), weave::ArgRef(qty)};
    const std::string rendered[1] = {name};
    return weave::detail::invoke<Found>(
        info, args, rendered,
        [&]() -> Found {
          ++prices;
          return shop::Product{sku, qty * 10};
        },
        weave::detail::CannotSkip{});
  }
  shop::Product save(const std::string& name, const shop::Product& p) {
    static constexpr weave::MethodInfo info{"shop::Catalog::save", "catalog.h", 2, k_put, {}, &k_product_codec};
    const std::string rendered[2] = {name, p.id};
    return weave::detail::invoke<shop::Product>(info, {}, rendered, [&] { return p; }, weave::detail::CannotSkip{});
  }
  void remove(const std::string& name, const std::string& id) {
    static constexpr weave::MethodInfo info{"shop::Catalog::remove", "catalog.h", 3, k_evict, {}};
    const std::string rendered[2] = {name, id};
    weave::detail::invoke<void>(info, {}, rendered, [] {}, weave::detail::CannotSkip{});
  }
  void clear(const std::string& name) {
    static constexpr weave::MethodInfo info{"shop::Catalog::clear", "catalog.h", 4, k_evict_all, {}};
    const std::string rendered[1] = {name};
    weave::detail::invoke<void>(info, {}, rendered, [] {}, weave::detail::CannotSkip{});
  }
};

using test_support::eventually;

}  // namespace cache_test
