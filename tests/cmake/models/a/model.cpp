#include "model.h"

#include "weave/lease.h"

std::string a::Model::name(const std::string& id) {
  const weave::Lease* lease = weave::current_lease();
  return lease ? "a locked " + lease->key() : "a unlocked " + id;
}
