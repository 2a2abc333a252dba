#include "model.h"

#include "weave/lease.h"

std::string b::Model::name(const std::string& id) {
  const weave::Lease* lease = weave::current_lease();
  return lease ? "b locked " + lease->key() : "b unlocked " + id;
}
