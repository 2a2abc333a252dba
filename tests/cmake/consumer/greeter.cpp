// Includes the annotated header directly: needs the flags weave_generate()
// gives this target (PRIVATE).
#include "greeter.h"

#include "weave/lease.h"

std::string Greeter::greet(const std::string& name) {
  const weave::Lease* lease = weave::current_lease();
  return lease ? "locked " + lease->key() : "unlocked " + name;
}
