#include "stock.h"

#include "weave/lease.h"

std::string Stock::reserve(const std::string& sku, int n) {
  const weave::Lease* lease = weave::current_lease();
  left -= n;
  return (lease ? "locked " + lease->key() : "unlocked " + sku) + " -> " + std::to_string(left);
}
