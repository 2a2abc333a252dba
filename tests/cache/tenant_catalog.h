// A service whose cache is named per call (a cache per tenant), woven by
// weavegen, for the cache suite (test_cache.cpp).
#pragma once

#include <atomic>
#include <string>

namespace tenants {

class Catalog {
 public:
  virtual ~Catalog() = default;

  [[cache(name="tenant:<tenant>", key="<id>")]]
  virtual std::string find(const std::string& tenant, const std::string& id) {
    ++loads;
    return tenant + "/" + id;
  }

  [[cache_evict(name="tenant:<tenant>", all=true)]]
  virtual void forget(const std::string& tenant) { (void)tenant; }

  std::atomic<int> loads{0};
};

}  // namespace tenants
