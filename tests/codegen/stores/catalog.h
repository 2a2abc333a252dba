// A catalog whose reads are cached and whose submits replay their first
// result: weavegen gives these methods a ResultCodec (test_stores_result_run.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shop {

struct Product {
  std::string id;
  int cents = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Product, id, cents)

class Catalog {
 public:
  virtual ~Catalog() = default;

  [[cache(name="product", key="<id>", ttl=30min, local_ttl=5min)]]
  virtual std::optional<Product> find(const std::string& id) {
    ++loads;
    if (id.empty()) return std::nullopt;
    return Product{id, 250};
  }

  [[dedupe(key="submit:<id>", on_duplicate=replay, window=10s)]]
  virtual Product submit(const std::string& id) { return Product{id, ++loads}; }

  [[dedupe(key="ping:<id>")]]
  virtual int ping(const std::string& id) { return static_cast<int>(id.size()); }

  // refresh_after: the proxy can re-make the call from copies of its arguments.
  [[cache(name="product", key="<id>", refresh_after=1min)]]
  virtual std::optional<Product> reload(const std::string& id, int cents) {
    ++loads;
    return Product{id, cents};
  }

  // A user's annotation whose argument "detaches" (tests/codegen/vocab/outbox.json):
  // its proxy copies the call as refresh_after's does.
  [[outbox(retry_after=30s, on_full=drop)]]
  virtual void notify(const std::string& to, int n) { sent.push_back(to + ":" + std::to_string(n)); }

  int loads = 0;
  std::vector<std::string> sent;
};

}  // namespace shop
